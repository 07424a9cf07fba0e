import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ProviderEnvError, readProviderEnv } from '../../../sandbox/env.ts';

describe('provider CLI environment', () => {
  test('defaults to port 4010 on 127.0.0.1 with every fault off', () => {
    const { options, logLevel } = readProviderEnv({});
    assert.equal(options.port, 4010);
    assert.equal(options.host, '127.0.0.1');
    assert.equal(logLevel, 'info');
    assert.deepEqual(options.faults?.tokenFailures, { count: 0, kind: '5xx' });
    assert.equal(options.faults?.dropNotifications, undefined);
  });

  test('reads lifetimes, URLs, the secret, the log level and fault controls', () => {
    const { options, logLevel } = readProviderEnv({
      PROVIDER_PORT: '0',
      PROVIDER_TOKEN_TTL: '30',
      PROVIDER_CONSUMER_URL_TTL: '120',
      PROVIDER_NOTIFICATION_URL: 'http://127.0.0.1:3000/obv/notifications',
      PROVIDER_NOTIFICATION_RETRY_DELAYS_MS: '100,200',
      PROVIDER_DROP_NOTIFICATIONS: '2',
      PROVIDER_NOTIFICATION_DELAY_MS: '500',
      PROVIDER_DUPLICATE_NOTIFICATIONS: '1',
      PROVIDER_TOKEN_FAILURES: '3',
      PROVIDER_TOKEN_FAILURE_KIND: 'timeout',
      PROVIDER_HOST: '0.0.0.0',
      PROVIDER_PUBLIC_URL: 'https://bank.example.test',
      PROVIDER_WEBHOOK_SECRET: 'whsec_bWVyY2hhbnQ=',
      PROVIDER_RETURN_URL: 'http://127.0.0.1:3000/obv/return',
      PROVIDER_NOTIFICATION_TIMEOUT_MS: '2500',
      PROVIDER_LOG_LEVEL: 'warn',
      UNRELATED: 'ignored',
    });
    assert.equal(options.port, 0);
    assert.equal(options.tokenTtlSeconds, 30);
    assert.equal(options.consumerUrlTtlSeconds, 120);
    assert.equal(options.defaultNotificationURL, 'http://127.0.0.1:3000/obv/notifications');
    assert.deepEqual(options.notificationRetryDelaysMs, [100, 200]);
    assert.equal(options.host, '0.0.0.0');
    assert.equal(options.publicUrl, 'https://bank.example.test');
    assert.equal(options.webhookSecret, 'whsec_bWVyY2hhbnQ=');
    assert.equal(options.defaultReturnURL, 'http://127.0.0.1:3000/obv/return');
    assert.equal(options.notificationTimeoutMs, 2500);
    assert.equal(logLevel, 'warn');
    assert.deepEqual(options.faults, {
      dropNotifications: 2,
      notificationDelayMs: 500,
      duplicateNotifications: 1,
      tokenFailures: { count: 3, kind: 'timeout' },
    });
  });

  test('rejects a bad value with an error naming each bad variable', () => {
    assert.throws(
      () =>
        readProviderEnv({ PROVIDER_TOKEN_TTL: 'soon', PROVIDER_TOKEN_FAILURE_KIND: 'crash', PROVIDER_PORT: '4010' }),
      (error: unknown) =>
        error instanceof ProviderEnvError &&
        /PROVIDER_TOKEN_TTL/.test(error.message) &&
        /PROVIDER_TOKEN_FAILURE_KIND/.test(error.message) &&
        !/PROVIDER_PORT/.test(error.message),
    );
    assert.throws(() => readProviderEnv({ PROVIDER_NOTIFICATION_URL: 'ftp://x' }), /PROVIDER_NOTIFICATION_URL/);
    assert.throws(
      () => readProviderEnv({ PROVIDER_NOTIFICATION_RETRY_DELAYS_MS: '1,,2' }),
      /PROVIDER_NOTIFICATION_RETRY_DELAYS_MS/,
    );
  });
});
