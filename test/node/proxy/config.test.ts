// Configuration: every bad setting is named at boot, https is enforced outside sandbox mode.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import {
  createStorage,
  ConfigError,
  configFromEnv,
  createLogger,
  createObvProxy,
  ENV_VARIABLES,
  type ObvProxyDependencies,
} from '../../../proxy/index.ts';
import { SANDBOX_WEBHOOK_SECRET } from '../../helpers/webhooks.ts';
import { listenAddress } from '../../../proxy/server.ts';
import http from 'node:http';

/** A production configuration (sandbox off): its own secrets, none of the sandbox's published ones. */
const PRODUCTION_WEBHOOK_SECRET = `whsec_${Buffer.from('production-webhook-key-0123456789').toString('base64')}`;
const VALID_ENV = {
  OBV_BASE_URL: 'https://api.provider.example',
  OBV_CLIENT_ID: 'client',
  OBV_CLIENT_SECRET: 'client-secret-from-the-provider',
  OBV_PUBLIC_URL: 'https://shop.example',
  OBV_WEBHOOK_SECRET: PRODUCTION_WEBHOOK_SECRET,
  OBV_MERCHANT_ID: 'merchant-1',
  OBV_SEALING_KEYS: 'k1:dux0ek/rqEzDBV9T2T/zc3W7us82yMS7iNmiqbwxckk=',
};

function configError(env: Record<string, string>): ConfigError {
  try {
    configFromEnv(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, `expected ConfigError, got ${String(error)}`);
    return error;
  }
  assert.fail('expected a ConfigError');
}

describe('configuration from the environment', () => {
  test('applies the documented defaults', () => {
    const config = configFromEnv(VALID_ENV);
    assert.equal(config.gatewayUrl, VALID_ENV.OBV_BASE_URL);
    assert.equal(config.mountPath, '/obv');
    assert.equal(config.sessionTtlMs, 15 * 60_000);
    assert.equal(config.tokenScope, 'obv/token-request');
    assert.equal(config.rateLimit, 30);
    assert.equal(config.sandbox, false);
    assert.deepEqual(config.allowedOrigins, []);
    assert.equal(config.port, 3000);
    assert.equal(config.redisPrefix, 'obv:');
  });

  test('reads the Redis key prefix and refuses one with spaces or of excessive length', () => {
    assert.equal(configFromEnv({ ...VALID_ENV, OBV_REDIS_PREFIX: 'shop-eu:' }).redisPrefix, 'shop-eu:');
    for (const bad of ['my shop:', 'x'.repeat(33)]) {
      const error = configError({ ...VALID_ENV, OBV_REDIS_PREFIX: bad });
      assert.deepEqual(
        error.issues.map((issue) => issue.setting),
        ['OBV_REDIS_PREFIX'],
      );
      assert.match(error.message, /OBV_REDIS_PREFIX: must be 1-32 characters .* \(no spaces\)/);
    }
  });

  test('reads the Redis replicas to wait for and Sentinel, and names what is wrong with them', () => {
    assert.equal(configFromEnv(VALID_ENV).redisMinReplicas, 0);
    assert.equal(configFromEnv(VALID_ENV).redisReplicaTimeoutMs, 1_000);
    const redis = { ...VALID_ENV, OBV_REDIS_URL: 'redis://:secret@mymaster/0' };
    const config = configFromEnv({
      ...redis,
      OBV_REDIS_MIN_REPLICAS: '1',
      OBV_REDIS_REPLICA_TIMEOUT: '250ms',
      OBV_REDIS_SENTINELS: 'sentinel-1:26379, 10.0.0.2:26380,[::1]:26381',
      OBV_REDIS_SENTINEL_NAME: 'mymaster',
    });
    assert.equal(config.redisMinReplicas, 1);
    assert.equal(config.redisReplicaTimeoutMs, 250);
    assert.deepEqual(config.redisSentinels, [
      { host: 'sentinel-1', port: 26379 },
      { host: '10.0.0.2', port: 26380 },
      { host: '::1', port: 26381 },
    ]);
    const settings = (env: Record<string, string>) => configError(env).issues.map((issue) => issue.setting);
    assert.deepEqual(settings({ ...redis, OBV_REDIS_MIN_REPLICAS: '-1' }), ['OBV_REDIS_MIN_REPLICAS']);
    assert.deepEqual(settings({ ...redis, OBV_REDIS_SENTINELS: 'sentinel-1', OBV_REDIS_SENTINEL_NAME: 'mymaster' }), [
      'OBV_REDIS_SENTINELS',
    ]);
    assert.deepEqual(settings({ ...redis, OBV_REDIS_SENTINELS: 'sentinel-1:26379' }), ['OBV_REDIS_SENTINEL_NAME']);
    assert.deepEqual(settings({ ...VALID_ENV, OBV_REDIS_SENTINELS: 's:26379', OBV_REDIS_SENTINEL_NAME: 'm' }), [
      'OBV_REDIS_URL',
    ]);
  });

  test('reads the endpoint 4 codes that mean re-authorization (default REAUTHORIZATION_REQUIRED) and refuses a malformed one', () => {
    assert.deepEqual(configFromEnv(VALID_ENV).reauthorizationCodes, ['REAUTHORIZATION_REQUIRED']);
    assert.deepEqual(
      configFromEnv({ ...VALID_ENV, OBV_REAUTHORIZATION_CODES: 'ITEM_LOGIN_REQUIRED, ACCOUNT_STALE' })
        .reauthorizationCodes,
      ['ITEM_LOGIN_REQUIRED', 'ACCOUNT_STALE'],
    );
    assert.deepEqual(
      configError({ ...VALID_ENV, OBV_REAUTHORIZATION_CODES: 'login required!' }).issues.map((issue) => issue.setting),
      ['OBV_REAUTHORIZATION_CODES'],
    );
  });

  test('reads durations, lists and booleans', () => {
    const config = configFromEnv({
      ...VALID_ENV,
      OBV_SESSION_TTL: '5m',
      OBV_UPSTREAM_TIMEOUT: '2500ms',
      OBV_ALLOWED_ORIGINS: 'https://a.example, https://b.example:8443',
      OBV_TRUST_PROXY: '1',
      OBV_RATE_LIMIT: '0',
    });
    assert.equal(config.sessionTtlMs, 300_000);
    assert.equal(config.upstreamTimeoutMs, 2_500);
    assert.deepEqual(config.allowedOrigins, ['https://a.example', 'https://b.example:8443']);
    assert.equal(config.trustProxy, 1);
    assert.equal(config.rateLimit, 0);
  });

  test('names every missing variable', () => {
    const error = configError({});
    assert.deepEqual(error.issues.map((issue) => issue.setting).sort(), [
      'OBV_BASE_URL',
      'OBV_CLIENT_ID',
      'OBV_CLIENT_SECRET',
      'OBV_MERCHANT_ID',
      'OBV_PUBLIC_URL',
      'OBV_SEALING_KEYS',
      'OBV_WEBHOOK_SECRET',
    ]);
    assert.ok(
      error.issues.every((issue) => issue.message.startsWith('is required')),
      error.message,
    );
    assert.match(error.message, /OBV_CLIENT_SECRET: is required/);
  });

  test('names each malformed variable with what is wrong', () => {
    const error = configError({
      ...VALID_ENV,
      OBV_SESSION_TTL: 'half an hour',
      OBV_ALLOWED_ORIGINS: 'https://a.example/path',
      OBV_WEBHOOK_SECRET: 'plain-secret',
      OBV_RATE_LIMIT: 'many',
      OBV_LOG_LEVEL: 'loud',
    });
    const settings = error.issues.map((issue) => issue.setting).sort();
    assert.deepEqual(settings, [
      'OBV_ALLOWED_ORIGINS',
      'OBV_LOG_LEVEL',
      'OBV_RATE_LIMIT',
      'OBV_SESSION_TTL',
      'OBV_WEBHOOK_SECRET',
    ]);
    assert.match(error.message, /OBV_WEBHOOK_SECRET: must be a Standard Webhooks secret/);
  });

  test('reports every problem in one round: a missing variable, an http URL and a malformed value together', () => {
    const error = configError({
      OBV_PUBLIC_URL: 'http://shop.example',
      OBV_SESSION_TTL: 'half an hour',
      OBV_ALLOWED_ORIGINS: 'https://a.example/path',
    });
    const messages = error.issues.map((issue) => `${issue.setting}: ${issue.message}`);
    assert.ok(messages.includes('OBV_BASE_URL: is required'), messages.join('\n'));
    assert.ok(
      messages.some((line) => line.startsWith('OBV_PUBLIC_URL: must use https')),
      messages.join('\n'),
    );
    assert.ok(
      messages.some((line) => line.startsWith('OBV_SESSION_TTL: ')),
      messages.join('\n'),
    );
    assert.ok(
      messages.some((line) => line.startsWith('OBV_ALLOWED_ORIGINS: must be an origin')),
      messages.join('\n'),
    );
    assert.equal(
      new Set(error.issues.map((issue) => issue.setting)).size,
      error.issues.length,
      'one message per variable',
    );
  });

  test('says which forms a duration, a boolean, a port and a log level accept', () => {
    const error = configError({
      ...VALID_ENV,
      OBV_SESSION_TTL: '30 minutes',
      OBV_UPSTREAM_TIMEOUT: '0',
      OBV_SANDBOX: 'maybe',
      PORT: 'eighty',
      OBV_LOG_LEVEL: 'loud',
    });
    const message = (setting: string) => error.issues.find((issue) => issue.setting === setting)?.message ?? '';
    assert.match(message('OBV_SESSION_TTL'), /30m, 90s, 1500ms, 2h, or a number of seconds/);
    assert.match(message('OBV_UPSTREAM_TIMEOUT'), /greater than zero: 30m/);
    assert.equal(message('OBV_SANDBOX'), 'must be true or false');
    assert.match(message('PORT'), /port number \(0-65535\)/);
    assert.match(message('OBV_LOG_LEVEL'), /one of fatal, error, warn, info, debug, trace, silent/);
  });

  test('accepts exactly true or false for OBV_SANDBOX: 1, yes and TRUE are refused, not taken as sandbox mode', () => {
    const sandboxEnv = { OBV_BASE_URL: 'http://127.0.0.1:4010', OBV_PUBLIC_URL: 'http://127.0.0.1:3000' };
    assert.equal(configFromEnv({ ...sandboxEnv, OBV_SANDBOX: 'true' }).sandbox, true);
    assert.equal(configFromEnv({ ...VALID_ENV, OBV_SANDBOX: 'false' }).sandbox, false);
    for (const value of ['1', 'yes', 'TRUE', 'on']) {
      const error = configError({ ...sandboxEnv, OBV_SANDBOX: value });
      const sandbox = error.issues.find((issue) => issue.setting === 'OBV_SANDBOX');
      assert.equal(sandbox?.message, 'must be true or false', value);
      // Nor are the sandbox credentials filled in as if it were on.
      assert.ok(
        error.issues.some((issue) => issue.setting === 'OBV_CLIENT_ID' && issue.message === 'is required'),
        value,
      );
    }
  });

  test('names an unknown OBV_* variable, with the real name it is closest to', () => {
    const error = configError({
      ...VALID_ENV,
      OBV_CLIENTID: 'client',
      OBV_SESION_TTL: '5m',
      OBV_SOMETHING_ELSE: 'x',
      NOT_OURS: 'y',
    });
    const messages = error.issues.map((issue) => `${issue.setting}: ${issue.message}`);
    assert.deepEqual(messages, [
      'OBV_CLIENTID: is not a variable obv-link reads (did you mean OBV_CLIENT_ID?)',
      'OBV_SESION_TTL: is not a variable obv-link reads (did you mean OBV_SESSION_TTL?)',
      'OBV_SOMETHING_ELSE: is not a variable obv-link reads',
    ]);
  });

  test('refuses a leftover OBV_REQUIRE_LINK_SESSION (removed: every start needs a link session, sandbox mode too) as unknown', () => {
    const error = configError({ ...VALID_ENV, OBV_REQUIRE_LINK_SESSION: 'true' });
    assert.deepEqual(
      error.issues.map((issue) => `${issue.setting}: ${issue.message}`),
      ['OBV_REQUIRE_LINK_SESSION: is not a variable obv-link reads'],
    );
  });

  test('refuses plain-http upstream and public URLs outside sandbox mode', () => {
    const error = configError({
      ...VALID_ENV,
      OBV_BASE_URL: 'http://api.provider.example',
      OBV_GATEWAY_URL: 'http://gw.provider.example',
    });
    assert.deepEqual(error.issues.map((issue) => issue.setting).sort(), ['OBV_BASE_URL', 'OBV_GATEWAY_URL']);
    assert.match(error.message, /must use https/);
    assert.equal(
      configFromEnv({ ...VALID_ENV, OBV_BASE_URL: 'http://127.0.0.1:4010', OBV_SANDBOX: 'true' }).baseUrl,
      'http://127.0.0.1:4010',
    );
  });

  test('sandbox mode listens on loopback unless HOST says otherwise; outside it HOST unset is every interface', () => {
    const sandboxEnv = {
      OBV_SANDBOX: 'true',
      OBV_BASE_URL: 'http://127.0.0.1:4010',
      OBV_PUBLIC_URL: 'http://127.0.0.1:3000',
    };
    assert.equal(configFromEnv(sandboxEnv).host, '127.0.0.1');
    assert.equal(configFromEnv({ ...sandboxEnv, HOST: '0.0.0.0' }).host, '0.0.0.0');
    assert.equal(configFromEnv({ ...sandboxEnv, HOST: '' }).host, '127.0.0.1');
    assert.equal(
      configFromEnv(VALID_ENV).host,
      undefined,
      'a production proxy (a container behind a balancer) listens on every interface',
    );
    assert.equal(configFromEnv({ ...VALID_ENV, HOST: '127.0.0.1' }).host, '127.0.0.1');
  });

  test('requires the gateway header values when transactions are enabled', () => {
    const error = configError({ ...VALID_ENV, OBV_MERCHANT_API_KEY: 'Zx8kQ2mN7vB4tR9wL1pS6yH3jD5fG0cA' });
    assert.deepEqual(error.issues.map((issue) => issue.setting).sort(), ['OBV_PGW_APP_ID', 'OBV_PGW_CLIENT_ID']);
  });

  test('OBV_SANDBOX=true fills the sandbox credentials left unset, and only then', () => {
    const env = {
      OBV_SANDBOX: 'true',
      OBV_BASE_URL: 'http://127.0.0.1:4010',
      OBV_PUBLIC_URL: 'http://127.0.0.1:3000',
      OBV_MERCHANT_API_KEY: 'k'.repeat(24),
    };
    const config = configFromEnv(env);
    assert.equal(config.clientId, 'sandbox_client');
    assert.equal(config.clientSecret, 'sandbox_secret');
    assert.equal(config.webhookSecret, SANDBOX_WEBHOOK_SECRET);
    assert.equal(config.pgwAppId, 'sandbox-app');
    assert.ok(config.merchantId);
    assert.equal(configFromEnv({ ...env, OBV_CLIENT_ID: 'mine' }).clientId, 'mine');
    const { OBV_SANDBOX: _flag, ...withoutFlag } = env;
    const messages = configError(withoutFlag).issues.map((issue) => `${issue.setting}: ${issue.message}`);
    for (const name of ['OBV_CLIENT_ID', 'OBV_CLIENT_SECRET', 'OBV_WEBHOOK_SECRET', 'OBV_MERCHANT_ID'])
      assert.ok(messages.includes(`${name}: is required`), name);
  });

  test("OBV_SANDBOX=true points at the sandbox's default address, and at this machine's PORT when one is given", () => {
    const config = configFromEnv({ OBV_SANDBOX: 'true', PORT: '3100' });
    assert.equal(config.baseUrl, 'http://127.0.0.1:4010');
    assert.equal(config.publicUrl, 'http://127.0.0.1:3100');
    const own = configFromEnv({
      OBV_SANDBOX: 'true',
      PORT: '3100',
      OBV_BASE_URL: 'http://127.0.0.1:4999',
      OBV_PUBLIC_URL: 'http://shop.test:8080',
    });
    assert.equal(own.baseUrl, 'http://127.0.0.1:4999');
    assert.equal(own.publicUrl, 'http://shop.test:8080');
    // Without a port the proxy cannot know where the app listens: it asks for the public URL.
    assert.deepEqual(
      configError({ OBV_SANDBOX: 'true' }).issues.map((issue) => `${issue.setting}: ${issue.message}`),
      ['OBV_PUBLIC_URL: is required'],
    );
    // Outside sandbox mode neither is filled in.
    const messages = configError({ PORT: '3100' }).issues.map((issue) => `${issue.setting}: ${issue.message}`);
    for (const name of ['OBV_BASE_URL', 'OBV_PUBLIC_URL']) assert.ok(messages.includes(`${name}: is required`), name);
  });

  test('createObvProxy names bad keys of a code configuration', () => {
    assert.throws(
      () => createObvProxy({ ...configFromEnv(VALID_ENV), publicUrl: 'not a url' }),
      (error: unknown) => error instanceof ConfigError && error.issues[0]?.setting === 'publicUrl',
    );
  });

  test('createObvProxy takes its dependencies beside the configuration, which keeps none of them', async () => {
    const config = configFromEnv(VALID_ENV);
    const backend = createStorage({ kind: 'memory' });
    const dependencies: Required<ObvProxyDependencies> = {
      logger: createLogger('silent'),
      backend,
      enrichStart: (_req, draft) => draft,
      onOutcome: () => undefined,
      onSavedAccountRemoved: () => undefined,
      eventTimings: { retryDelaysMs: [10] },
      relay: { pingIntervalMs: 1_000 },
      defaultMetrics: false,
      tokenRetry: { limit: 0 },
      now: Date.now,
      bankStepGraceMs: 1_000,
      hostedElementScript: '/nonexistent/obv-link-account.js',
    };
    const proxy = createObvProxy({ ...config, ...dependencies });
    try {
      assert.deepEqual(proxy.config, config);
      for (const key of Object.keys(dependencies)) assert.equal(key in proxy.config, false, key);
    } finally {
      await proxy.close();
      await backend.close();
    }
  });
});

describe('OBV_TRUST_PROXY', () => {
  test('takes a hop count or addresses/subnets', () => {
    assert.equal(configFromEnv({ ...VALID_ENV, OBV_TRUST_PROXY: '2' }).trustProxy, 2);
    assert.deepEqual(
      configFromEnv({ ...VALID_ENV, OBV_TRUST_PROXY: '10.0.0.0/8, 192.168.1.7, loopback, fd00::/8' }).trustProxy,
      ['10.0.0.0/8', '192.168.1.7', 'loopback', 'fd00::/8'],
    );
    assert.equal(configFromEnv({ ...VALID_ENV, OBV_TRUST_PROXY: 'false' }).trustProxy, false);
  });

  test('refuses true (any client could choose its address) and malformed subnets', () => {
    for (const bad of ['true', '10.0.0.0/33', 'proxy.example', '10.0.0.1/255.0.0.1.5']) {
      const error = configError({ ...VALID_ENV, OBV_TRUST_PROXY: bad });
      assert.deepEqual(
        error.issues.map((issue) => issue.setting),
        ['OBV_TRUST_PROXY'],
        bad,
      );
      assert.match(error.message, /hop count/);
    }
    assert.throws(
      () => createObvProxy({ ...configFromEnv(VALID_ENV), trustProxy: true as unknown as number }),
      (error: unknown) => error instanceof ConfigError && error.issues[0]?.setting === 'trustProxy',
    );
  });

  test('refuses entries that together or alone cover public address space broadly, naming each and the accepted forms', () => {
    const error = configError({ ...VALID_ENV, OBV_TRUST_PROXY: '0.0.0.0/1,128.0.0.0/1,::/1,8000::/1' });
    assert.deepEqual(
      error.issues.map((issue) => issue.setting),
      ['OBV_TRUST_PROXY', 'OBV_TRUST_PROXY', 'OBV_TRUST_PROXY', 'OBV_TRUST_PROXY'],
    );
    for (const entry of ['0.0.0.0/1', '128.0.0.0/1', '::/1', '8000::/1'])
      assert.match(error.message, new RegExp(`OBV_TRUST_PROXY: ${entry.replace(/\./g, '\\.')} covers`));
    assert.match(
      error.message,
      /accepted: a hop count up to 5, or a comma list of at most 256 addresses, private subnets .* public IPv4 subnets of \/12 or narrower/,
    );
    for (const wide of [
      '10.0.0.0/7',
      '10.0.0.0/254.0.0.0',
      '::ffff:0:0/96',
      '::ffff:0.0.0.0/100',
      '::/64',
      '2001::/16',
      'fe80::/9',
    ]) {
      assert.deepEqual(
        configError({ ...VALID_ENV, OBV_TRUST_PROXY: wide }).issues.map((issue) => issue.setting),
        ['OBV_TRUST_PROXY'],
        wide,
      );
    }
    assert.throws(
      () => createObvProxy({ ...configFromEnv(VALID_ENV), trustProxy: ['0.0.0.0/0'] }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.issues[0]?.setting === 'trustProxy' &&
        /covers public address space/.test(error.message),
    );
  });

  test('accepts private, unique-local and link-local ranges, narrow public ranges and single addresses', () => {
    for (const fine of [
      '10.0.0.0/8',
      '172.16.0.0/12',
      '104.16.0.0/13',
      '10.0.0.0/255.0.0.0',
      'fc00::/7',
      'fd12:3456::/48',
      'fe80::/10',
      '2001:db8::/32',
      '::ffff:10.0.0.0/104',
      '203.0.113.7',
      'loopback, uniquelocal',
    ]) {
      assert.ok(configFromEnv({ ...VALID_ENV, OBV_TRUST_PROXY: fine }).trustProxy, fine);
    }
  });
});

describe('production guardrails (OBV_SANDBOX unset)', () => {
  const settingsOf = (env: Record<string, string>) =>
    configError(env)
      .issues.map((issue) => issue.setting)
      .sort();

  test("refuses the sandbox's published webhook secret and credentials", () => {
    assert.deepEqual(
      settingsOf({
        ...VALID_ENV,
        OBV_WEBHOOK_SECRET: SANDBOX_WEBHOOK_SECRET,
        OBV_CLIENT_ID: 'sandbox_client',
        OBV_CLIENT_SECRET: 'sandbox_secret',
      }),
      ['OBV_CLIENT_ID', 'OBV_CLIENT_SECRET', 'OBV_WEBHOOK_SECRET'],
    );
    assert.match(configError({ ...VALID_ENV, OBV_WEBHOOK_SECRET: SANDBOX_WEBHOOK_SECRET }).message, /published secret/);
  });

  test("refuses the sandbox's webhook key in any spelling that decodes to it (padding dropped or changed)", () => {
    const encoded = SANDBOX_WEBHOOK_SECRET.slice('whsec_'.length);
    for (const variant of [encoded.replace(/=+$/, ''), encoded.replace(/==$/, '='), `${encoded.replace(/=+$/, '')}=`]) {
      assert.notEqual(`whsec_${variant}`, SANDBOX_WEBHOOK_SECRET);
      const error = configError({ ...VALID_ENV, OBV_WEBHOOK_SECRET: `whsec_${variant}` });
      assert.deepEqual(
        error.issues.map((issue) => issue.setting),
        ['OBV_WEBHOOK_SECRET'],
        variant,
      );
      assert.match(error.message, /published secret/);
    }
  });

  test('refuses webhook keys without entropy: zeros, one repeated byte, a short repeated pattern', () => {
    for (const bytes of [Buffer.alloc(24), Buffer.alloc(32, 0x41), Buffer.from('abcabcabcabcabcabcabcabcabcabc')]) {
      const error = configError({ ...VALID_ENV, OBV_WEBHOOK_SECRET: `whsec_${bytes.toString('base64')}` });
      assert.deepEqual(
        error.issues.map((issue) => issue.setting),
        ['OBV_WEBHOOK_SECRET'],
      );
      assert.match(error.message, /must be random bytes/);
    }
    assert.ok(configFromEnv({ ...VALID_ENV, OBV_WEBHOOK_SECRET: PRODUCTION_WEBHOOK_SECRET }).webhookSecret);
  });

  test('refuses a webhook secret under 24 bytes and an API key under 32 characters', () => {
    const oneByte = `whsec_${Buffer.from('x').toString('base64')}`;
    assert.deepEqual(settingsOf({ ...VALID_ENV, OBV_WEBHOOK_SECRET: oneByte }), ['OBV_WEBHOOK_SECRET']);
    const gateway = { OBV_PGW_APP_ID: 'app', OBV_PGW_CLIENT_ID: 'client' };
    for (const key of ['a'.repeat(24), 'a'.repeat(40), 'Zx8kQ2mN7vB4tR9wL1pS6yH3jD5f']) {
      assert.deepEqual(
        settingsOf({ ...VALID_ENV, ...gateway, OBV_MERCHANT_API_KEY: key }),
        ['OBV_MERCHANT_API_KEY'],
        key,
      );
    }
    assert.ok(
      configFromEnv({ ...VALID_ENV, ...gateway, OBV_MERCHANT_API_KEY: 'Zx8kQ2mN7vB4tR9wL1pS6yH3jD5fG0cA' })
        .merchantApiKey,
    );
  });

  test('refuses http allowed origins', () => {
    const error = configError({ ...VALID_ENV, OBV_ALLOWED_ORIGINS: 'https://a.example, http://b.example' });
    assert.deepEqual(
      error.issues.map((issue) => issue.setting),
      ['OBV_ALLOWED_ORIGINS'],
    );
    assert.match(error.message, /http:\/\/b\.example must use https/);
  });

  test('refuses a public URL with a query, a fragment or user:password@ (sandbox or not)', () => {
    for (const url of ['https://shop.example/?a=1', 'https://shop.example/#x', 'https://user:pw@shop.example']) {
      assert.deepEqual(settingsOf({ ...VALID_ENV, OBV_PUBLIC_URL: url }), ['OBV_PUBLIC_URL'], url);
      assert.deepEqual(settingsOf({ ...VALID_ENV, OBV_SANDBOX: 'true', OBV_PUBLIC_URL: url }), ['OBV_PUBLIC_URL'], url);
    }
  });

  test('sandbox mode accepts the published values and says so at boot', () => {
    const lines: string[] = [];
    const logger = createLogger('info', { write: (line: string) => lines.push(line) });
    const proxy = createObvProxy({
      ...configFromEnv({
        ...VALID_ENV,
        OBV_SANDBOX: 'true',
        OBV_WEBHOOK_SECRET: SANDBOX_WEBHOOK_SECRET,
        OBV_BASE_URL: 'http://127.0.0.1:4010',
        OBV_STORAGE: 'memory',
      }),
      logger,
    });
    assert.ok(
      lines.some((line) => line.includes('"level":40') && line.includes('storage is in memory')),
      'memory storage is said at boot',
    );
    assert.ok(
      lines.some((line) => line.includes('"level":40') && line.includes('sandbox mode')),
      lines.join('\n'),
    );
    void proxy.close();
  });
});

describe("the proxy guide's configuration table (docs/PROXY.md)", () => {
  const section = readFileSync(new URL('../../../docs/PROXY.md', import.meta.url), 'utf8');
  // Variable names in the first cell of each table row (`A` / `B` rows list two).
  const documented = section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...(line.split('|')[1] ?? '').matchAll(/`([A-Z_]+)`/g)].map((match) => match[1]));

  test('lists exactly the variables the proxy reads', () => {
    assert.deepEqual([...new Set(documented)].sort(), Object.keys(ENV_VARIABLES).sort());
  });
});

describe('npm start (proxy/cli.ts)', () => {
  function runCli(env: Record<string, string>) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'proxy/cli.ts'], {
      // The CLI's default storage (SQLite) in a directory of this test's own.
      env: { PATH: process.env.PATH ?? '', OBV_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'obv-cli-')), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    return { child, output: () => ({ stdout, stderr }) };
  }

  test('exits 1 listing each bad variable', async () => {
    const { child, output } = runCli({ OBV_BASE_URL: 'nope' });
    const [code] = await once(child, 'exit');
    assert.equal(code, 1);
    assert.match(output().stderr, /OBV_BASE_URL: must be an absolute http\(s\) URL/);
    assert.match(output().stderr, /OBV_CLIENT_ID: is required/);
  });

  test('the listening line names the address: HOST as set, or every interface when HOST is unset (never "localhost")', async () => {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      assert.match(listenAddress(server, '127.0.0.1'), /^127\.0\.0\.1:\d+$/);
      assert.match(
        listenAddress(server, undefined),
        /^every interface, port \d+ \(HOST unset; HOST=127\.0\.0\.1 behind a TLS proxy/,
      );
    } finally {
      server.close();
    }
  });

  test('in sandbox mode listens on 127.0.0.1 and says at boot how to listen elsewhere', async () => {
    const { child, output } = runCli({
      OBV_SANDBOX: 'true',
      OBV_BASE_URL: 'http://127.0.0.1:9',
      OBV_PUBLIC_URL: 'http://127.0.0.1:3000',
      OBV_STORAGE: 'memory',
      PORT: '0',
      OBV_DRAIN_WINDOW: '0',
    });
    try {
      for (let i = 0; i < 200 && !output().stdout.includes('proxy listening'); i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const line = JSON.parse(
        output()
          .stdout.split('\n')
          .find((l) => l.includes('proxy listening')) ?? '{}',
      ) as { url?: string; address?: string };
      assert.match(line.url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/obv$/, output().stdout);
      assert.match(line.address ?? '', /^127\.0\.0\.1:\d+$/, 'the line names the address it listens on');
      assert.match(
        output().stdout,
        /sandbox mode: listening on 127\.0\.0\.1 only \(HOST=0\.0\.0\.0 listens on every interface\)/,
      );
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });

  test('listens on PORT and logs its URL', async () => {
    const { child, output } = runCli({ ...VALID_ENV, PORT: '0', OBV_DRAIN_WINDOW: '0' });
    try {
      for (let i = 0; i < 200 && !output().stdout.includes('listening'); i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const line = JSON.parse(
        output()
          .stdout.split('\n')
          .find((l) => l.includes('listening')) ?? '{}',
      ) as { url?: string };
      assert.match(line.url ?? '', /^http:\/\/localhost:\d+\/obv$/);
      const health = await fetch(`${line.url}/healthz`);
      assert.equal(health.status, 200);
      assert.ok(!output().stdout.includes(VALID_ENV.OBV_CLIENT_SECRET + '"'), 'the secret is not logged');
    } finally {
      child.kill('SIGTERM');
      await once(child, 'exit');
    }
  });
});
