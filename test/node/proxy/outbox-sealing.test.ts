// The proxy's own storage seals merchant events at rest (storage/outbox.ts OutboxCodec); a storage a
// caller builds and hands in (`backend`) seals them only when built with a codec, and outside sandbox
// mode the proxy says so at boot when it does not.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createObvProxy, createOutboxCodec, createStorage, type ObvProxy } from '../../../proxy/index.ts';
import { SANDBOX_SEALING_KEY } from '../../../proxy/config/sealing-keys.ts';
import { captureLogs } from '../../helpers/log-capture.ts';

const PRODUCTION = {
  baseUrl: 'https://127.0.0.1:9',
  gatewayUrl: 'https://127.0.0.1:9',
  sandbox: false,
  publicUrl: 'https://shop.example',
  allowedOrigins: [],
  clientId: 'production-client',
  clientSecret: 'production-client-secret',
  webhookSecret: `whsec_${Buffer.from('production-webhook-key-0123456789').toString('base64')}`,
  merchantApiKey: 'production-api-key-0123456789-abcdefghijklmnop',
  merchantId: 'merchant-1',
  pgwAppId: 'app-1',
  pgwClientId: 'pgw-client-1',
  sealingKeys: 'k1:dux0ek/rqEzDBV9T2T/zc3W7us82yMS7iNmiqbwxckk=',
  storage: 'memory' as const,
  allowVolatileStorage: true,
};
const WARNING = 'keeps merchant events in the clear';

async function boot(outboxCodec?: ReturnType<typeof createOutboxCodec>): Promise<number> {
  const logs = captureLogs('info');
  const backend = createStorage({ kind: 'memory', outboxCodec });
  let proxy: ObvProxy | undefined;
  try {
    proxy = createObvProxy({ ...PRODUCTION, backend, logger: logs.logger });
    return logs.find(WARNING).length;
  } finally {
    await proxy?.close();
    await backend.close();
  }
}

test('outside sandbox mode, a backend built without an outbox codec is warned about at boot; one built with it is not', async () => {
  assert.equal(await boot(), 1);
  assert.equal(await boot(createOutboxCodec([SANDBOX_SEALING_KEY])), 0);
});
