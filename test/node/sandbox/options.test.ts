import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_WEBHOOK_SECRET, createProvider } from '../../../sandbox/index.ts';

describe('provider options', () => {
  test('defaults to 1-hour tokens, 15-minute consumerUrls, the documented webhook secret and growing retry delays', (t) => {
    const provider = createProvider();
    t.after(() => provider.close());
    const { config } = provider;
    assert.equal(config.tokenTtlSeconds, 3600);
    assert.equal(config.consumerUrlTtlSeconds, 15 * 60);
    assert.equal(config.webhookSecret, DEFAULT_WEBHOOK_SECRET);
    assert.equal(DEFAULT_WEBHOOK_SECRET, 'whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC1vYnYtbGluaw==');
    const delays = config.notificationRetryDelaysMs;
    assert.ok(delays.length >= 3, 'several retries');
    for (let i = 1; i < delays.length; i += 1)
      assert.ok((delays[i] ?? 0) > (delays[i - 1] ?? 0), 'each wait is longer than the last (backoff)');
    assert.deepEqual(provider.faults, {
      dropNotifications: 0,
      notificationDelayMs: 0,
      duplicateNotifications: 0,
      lateNotifications: { count: 0, delayMs: 0 },
      tokenFailures: { count: 0, kind: '5xx' },
      transactionDelayMs: 0,
      verificationDelayMs: 0,
      endpointTimeouts: { verification: 0, transaction: 0 },
      verificationFailures: { count: 0, errorCode: '', errorMessage: '' },
    });
  });

  test('rounds a fractional token lifetime up, so expires_in stays an integer', (t) => {
    const provider = createProvider({ tokenTtlSeconds: 1.2 });
    t.after(() => provider.close());
    assert.equal(provider.config.tokenTtlSeconds, 2);
  });

  test('rejects impossible options with a TypeError naming the option', () => {
    const cases: Array<[Parameters<typeof createProvider>[0], RegExp]> = [
      [{ tokenTtlSeconds: 0 }, /tokenTtlSeconds/],
      [{ consumerUrlTtlSeconds: -1 }, /consumerUrlTtlSeconds/],
      [{ notificationTimeoutMs: Number.NaN }, /notificationTimeoutMs/],
      [{ notificationRetryDelaysMs: [10, -5] }, /notificationRetryDelaysMs/],
      [{ defaultNotificationURL: 'ftp://merchant.example/hook' }, /defaultNotificationURL/],
      [{ defaultReturnURL: 'not a url' }, /defaultReturnURL/],
      [{ maxEntries: 0 }, /maxEntries/],
    ];
    for (const [options, name] of cases)
      assert.throws(
        () => createProvider(options),
        (error: unknown) => error instanceof TypeError && name.test(error.message),
      );
  });
});
