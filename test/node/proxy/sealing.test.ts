// Sealing keys and sealed values: AES-256-GCM bound to a context, several keys by id so one can be
// rotated without downtime, and configuration guardrails for the keys themselves.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { ConfigError, configFromEnv } from '../../../proxy/index.ts';
import { SANDBOX_SEALING_KEY, SealingKeyList } from '../../../proxy/config/sealing-keys.ts';
import { createSealer, UnsealError } from '../../../proxy/sealing/sealer.ts';
import { lookupSession } from '../../helpers/session-requests.ts';
import { PRODUCTION_ENV } from '../../helpers/production-env.ts';

const key = (id: string) => ({ id, key: randomBytes(32) });

function unsealFailure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof UnsealError, `expected UnsealError, got ${String(error)}`);
    return error.reason;
  }
  assert.fail('expected the value not to open');
}

describe('sealed values', () => {
  test('open to what was sealed, and show neither the plaintext nor the key', () => {
    const k1 = key('k1');
    const sealer = createSealer([k1]);
    const sealed = sealer.seal('acct_secret_token_123', 'account-token:s1');
    assert.match(sealed, /^obv1\.k1\.[A-Za-z0-9_-]+$/);
    assert.ok(!sealed.includes('acct_secret_token_123'));
    assert.ok(!Buffer.from(sealed.split('.')[2]!, 'base64url').includes(Buffer.from('acct_secret_token_123')));
    assert.equal(sealer.open(sealed, 'account-token:s1'), 'acct_secret_token_123');
    assert.notEqual(sealer.seal('acct_secret_token_123', 'account-token:s1'), sealed, 'a fresh IV each time');
  });

  test('a rotated key still opens records sealed under the old one; new values use the first key', () => {
    const [oldKey, newKey] = [key('2026-10'), key('2026-11')];
    const sealedBefore = createSealer([oldKey]).seal('acct_1', 'ctx');
    const rotated = createSealer([newKey, oldKey]);
    assert.equal(rotated.open(sealedBefore, 'ctx'), 'acct_1');
    assert.match(rotated.seal('acct_2', 'ctx'), /^obv1\.2026-11\./);
    assert.equal(
      unsealFailure(() => createSealer([newKey]).open(sealedBefore, 'ctx')),
      'unknown-key',
      'once the old key is dropped',
    );
  });

  test('refuses a value altered in one byte, sealed for another context, or not sealed at all', () => {
    const sealer = createSealer([key('k1')]);
    const sealed = sealer.seal('acct_1', 'account-token:s1');
    const body = Buffer.from(sealed.split('.')[2]!, 'base64url');
    for (const index of [0, 14, body.length - 1]) {
      const altered = Buffer.from(body);
      altered[index]! ^= 1;
      assert.equal(
        unsealFailure(() => sealer.open(`obv1.k1.${altered.toString('base64url')}`, 'account-token:s1')),
        'tampered',
        `byte ${index}`,
      );
    }
    assert.equal(
      unsealFailure(() => sealer.open(sealed, 'account-token:s2')),
      'tampered',
    );
    for (const junk of ['acct_1', 'obv1.k1', 'obv2.k1.AAAA', 'obv1.k1.AAAA', 'obv1.k1.A$B']) {
      assert.equal(
        unsealFailure(() => sealer.open(junk, 'account-token:s1')),
        'malformed',
        junk,
      );
    }
  });
});

describe('sealed values have one spelling', () => {
  test('a sealed string opens only as it was written: the same bytes with other unused bits in the last base64url character do not open', () => {
    const sealer = createSealer([key('k1')]);
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    // 12 + 16 + 1 bytes leave 4 unused bits in the last character; 12 + 16 + 2 bytes leave 2.
    for (const plaintext of ['a', 'ab']) {
      const sealed = sealer.seal(plaintext, 'saved-account:u1');
      const opened = [...alphabet]
        .map((last) => `${sealed.slice(0, -1)}${last}`)
        .filter((spelling) => {
          try {
            return sealer.open(spelling, 'saved-account:u1') === plaintext;
          } catch (error) {
            // Other bytes are tampered; the same bytes in another spelling are malformed.
            assert.ok(error instanceof UnsealError, `${spelling}: ${String(error)}`);
            return false;
          }
        });
      assert.deepEqual(opened, [sealed], plaintext);
    }
  });
});

describe('a record sealed under a key this instance lacks', () => {
  test('answers 503 sealing-key-unavailable (another instance may have the key), never a 500, and logs the key id', async (t) => {
    const { startProxyPair, TEST_MERCHANT_API_KEY } = await import('../../helpers/proxy-harness.ts');
    const { completeConsumerStep } = await import('../../helpers/consumer.ts');
    const rotated = { id: 'new', key: randomBytes(32) };
    const pair = await startProxyPair({ proxy: { sealingKeys: [rotated] } });
    t.after(() => pair.close());
    const { sessionId, consumerUrl } = await pair.startVerification();
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const { outcome } = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as {
      outcome: { linkRef: string };
    };
    // An instance still on the old keys shares the store (a rolling deploy done in the wrong order).
    const { startProxy } = await import('../../helpers/proxy-harness.ts');
    const stale = await startProxy({
      providerUrl: pair.provider.url,
      proxy: { backend: pair.backend, sealingKeys: [key('old')] },
    });
    t.after(() => stale.close());
    const read = await fetch(`${stale.baseUrl}/links/${outcome.linkRef}`, {
      headers: { authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
    });
    assert.equal(read.status, 503);
    assert.equal(((await read.json()) as { type: string }).type, 'urn:obv-link:problem:sealing-key-unavailable');
    assert.ok(
      stale.logs.lines.some((line) => line.includes('key \\"new\\"') || line.includes('key "new"')),
      'the log names the missing key id',
    );
  });
});

describe('OBV_SEALING_KEYS', () => {
  const { OBV_SEALING_KEYS: _keys, ...production } = PRODUCTION_ENV;
  const issuesOf = (env: Record<string, string>) => {
    try {
      configFromEnv(env);
    } catch (error) {
      assert.ok(error instanceof ConfigError);
      return error.issues.filter((issue) => issue.setting === 'OBV_SEALING_KEYS').map((issue) => issue.message);
    }
    return [];
  };

  test('reads id:base64 entries in order (standard or url-safe base64)', () => {
    const [a, b] = [randomBytes(32), randomBytes(32)];
    const config = configFromEnv({
      ...production,
      OBV_SEALING_KEYS: `new:${a.toString('base64')}, old:${b.toString('base64url')}`,
    });
    assert.deepEqual(
      config.sealingKeys?.map((k) => k.id),
      ['new', 'old'],
    );
    assert.ok(config.sealingKeys?.[0]?.key.equals(a) && config.sealingKeys[1]?.key.equals(b));
  });

  test('a payment retention shorter than a link reference lives is refused (the order could be paid twice)', () => {
    const env = { ...production, OBV_SEALING_KEYS: `k1:${randomBytes(32).toString('base64')}` };
    assert.equal(configFromEnv(env).paymentRetentionMs, 720 * 3_600_000);
    assert.throws(
      () => configFromEnv({ ...env, OBV_PAYMENT_RETENTION: '30' }),
      /OBV_PAYMENT_RETENTION: must be at least the session lifetime/,
    );
  });

  test("are required outside sandbox mode, and the sandbox's published key is refused there", () => {
    assert.match(issuesOf(production).join(), /is required/);
    assert.match(
      issuesOf({ ...production, OBV_SEALING_KEYS: `mine:${SANDBOX_SEALING_KEY.key.toString('base64')}` }).join(),
      /sandbox's published key/,
    );
  });

  test('sandbox mode fills the published key', () => {
    const config = configFromEnv({
      OBV_SANDBOX: 'true',
      OBV_BASE_URL: 'http://127.0.0.1:4010',
      OBV_PUBLIC_URL: 'http://127.0.0.1:3000',
    });
    assert.ok(config.sealingKeys?.[0]?.key.equals(SANDBOX_SEALING_KEY.key));
  });

  test('refuses short, non-random, malformed and duplicate keys, naming the accepted form', () => {
    const cases = {
      short: `k1:${randomBytes(16).toString('base64')}`,
      zeros: `k1:${Buffer.alloc(32).toString('base64')}`,
      repeated: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
      'no id': randomBytes(32).toString('base64'),
      'bad id': `k 1:${randomBytes(32).toString('base64')}`,
      duplicate: `k1:${randomBytes(32).toString('base64')},k1:${randomBytes(32).toString('base64')}`,
    };
    for (const [name, value] of Object.entries(cases)) {
      const messages = issuesOf({ ...production, OBV_SEALING_KEYS: value });
      assert.ok(messages.length > 0, `${name} is refused`);
    }
    for (const madeUp of [
      Buffer.from(Array.from({ length: 32 }, (_, i) => i)),
      Buffer.from('correct horse battery staple 123'),
    ]) {
      assert.match(
        issuesOf({ ...production, OBV_SEALING_KEYS: `k1:${madeUp.toString('base64')}` }).join(),
        /not random/,
        madeUp.toString('hex'),
      );
    }
    assert.match(issuesOf({ ...production, OBV_SEALING_KEYS: cases.zeros }).join(), /not random/);
    assert.match(issuesOf({ ...production, OBV_SEALING_KEYS: cases.short }).join(), /id:base64/);
    assert.equal(SealingKeyList.safeParse([]).success, false);
  });
});
