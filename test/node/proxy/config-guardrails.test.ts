// Configuration guardrails of issue 29: a link session that outlives the payment record, weak or crossed
// production settings, and the boot lines that say which protections are switched off.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ConfigError, configFromEnv } from '../../../proxy/index.ts';

/** A production configuration (sandbox off), valid as it is. */
const VALID_ENV = {
  OBV_BASE_URL: 'https://api.provider.example',
  OBV_CLIENT_ID: 'client',
  OBV_CLIENT_SECRET: 'client-secret-from-the-provider',
  OBV_PUBLIC_URL: 'https://shop.example',
  OBV_WEBHOOK_SECRET: `whsec_${Buffer.from('production-webhook-key-0123456789').toString('base64')}`,
  OBV_MERCHANT_ID: 'merchant-1',
  OBV_SEALING_KEYS: 'k1:dux0ek/rqEzDBV9T2T/zc3W7us82yMS7iNmiqbwxckk=',
};

function issuesOf(env: Record<string, string>): string[] {
  try {
    configFromEnv(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    return error.issues.map((issue) => `${issue.setting}: ${issue.message}`);
  }
  return [];
}

describe('OBV_LINK_SESSION_TTL', () => {
  test('refuses a link session that outlives the payment record (the order would pay again)', () => {
    const issues = issuesOf({ ...VALID_ENV, OBV_LINK_SESSION_TTL: '1000h', OBV_PAYMENT_RETENTION: '720h' });
    assert.ok(issues.some((line) => /^OBV_LINK_SESSION_TTL: must be at most 24h/.test(line)), issues.join('\n'));
  });

  test('refuses a link session lifetime not well inside the payment retention', () => {
    // 20 h is under the maximum, but 20 h + the session's 15 min + 1 h is more than half of 40 h.
    const issues = issuesOf({ ...VALID_ENV, OBV_LINK_SESSION_TTL: '20h', OBV_PAYMENT_RETENTION: '40h' });
    assert.deepEqual(issues.map((line) => line.split(':')[0]), ['OBV_LINK_SESSION_TTL'], issues.join('\n'));
    assert.match(issues[0] ?? '', /half of OBV_PAYMENT_RETENTION/);
    assert.match(issues[0] ?? '', /at most 18h 44m 50s here/);
  });

  test('refuses a year in sandbox mode too, and accepts a day beside the default retention', () => {
    const sandbox = { OBV_SANDBOX: 'true', OBV_BASE_URL: 'http://127.0.0.1:4010', OBV_PUBLIC_URL: 'http://127.0.0.1:3000' };
    assert.ok(issuesOf({ ...sandbox, OBV_LINK_SESSION_TTL: '8760h' }).some((line) => line.startsWith('OBV_LINK_SESSION_TTL: must be at most 24h')));
    assert.equal(configFromEnv({ ...VALID_ENV, OBV_LINK_SESSION_TTL: '24h' }).linkSessionTtlMs, 24 * 3_600_000);
    assert.equal(configFromEnv({ ...VALID_ENV, OBV_LINK_SESSION_TTL: '20h', OBV_PAYMENT_RETENTION: '43h' }).linkSessionTtlMs, 20 * 3_600_000);
  });
});
