// Configuration guardrails of issue 29: a link session that outlives the payment record, weak or crossed
// production settings, and the boot lines that say which protections are switched off.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { ConfigError, configFromEnv, createObvProxy } from '../../../proxy/index.ts';
import { listenerWarnings, protectionWarnings } from '../../../proxy/config/warnings.ts';
import { parseProxyConfig } from '../../../proxy/config/schema.ts';
import { startProxyServers } from '../../../proxy/server.ts';
import { captureLogs } from '../../helpers/log-capture.ts';
import { sandboxProxyConfig } from '../../helpers/proxy-harness.ts';
import { PRODUCTION_ENV } from '../../helpers/production-env.ts';

const VALID_ENV = PRODUCTION_ENV;

const GATEWAY = { OBV_PGW_APP_ID: 'app', OBV_PGW_CLIENT_ID: 'pgw-client' };
const SEALING_KEY = 'dux0ek/rqEzDBV9T2T/zc3W7us82yMS7iNmiqbwxckk=';

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
    assert.ok(
      issues.some((line) => /^OBV_LINK_SESSION_TTL: must be at most 24h/.test(line)),
      issues.join('\n'),
    );
  });

  test('refuses a link session lifetime not well inside the payment retention', () => {
    // 20 h is under the maximum, but 20 h + the session's 15 min + 1 h is more than half of 40 h.
    const issues = issuesOf({ ...VALID_ENV, OBV_LINK_SESSION_TTL: '20h', OBV_PAYMENT_RETENTION: '40h' });
    assert.deepEqual(
      issues.map((line) => line.split(':')[0]),
      ['OBV_LINK_SESSION_TTL'],
      issues.join('\n'),
    );
    assert.match(issues[0] ?? '', /half of OBV_PAYMENT_RETENTION/);
    assert.match(issues[0] ?? '', /at most 18h 44m 50s here/);
  });

  test('refuses a year in sandbox mode too, and accepts a day beside the default retention', () => {
    const sandbox = {
      OBV_SANDBOX: 'true',
      OBV_BASE_URL: 'http://127.0.0.1:4010',
      OBV_PUBLIC_URL: 'http://127.0.0.1:3000',
    };
    assert.ok(
      issuesOf({ ...sandbox, OBV_LINK_SESSION_TTL: '8760h' }).some((line) =>
        line.startsWith('OBV_LINK_SESSION_TTL: must be at most 24h'),
      ),
    );
    assert.equal(configFromEnv({ ...VALID_ENV, OBV_LINK_SESSION_TTL: '24h' }).linkSessionTtlMs, 24 * 3_600_000);
    assert.equal(
      configFromEnv({ ...VALID_ENV, OBV_LINK_SESSION_TTL: '20h', OBV_PAYMENT_RETENTION: '43h' }).linkSessionTtlMs,
      20 * 3_600_000,
    );
  });
});

describe('OBV_TRUST_PROXY: no broad public range, in any spelling', () => {
  const everyPublicSlash8 = Array.from({ length: 255 }, (_, index) => index + 1).filter(
    (octet) => octet !== 10 && octet !== 127,
  );

  test('refuses all 255 IPv4 /8 subnets, as prefixes, as ::ffff:…/104 and as /255.0.0.0 masks, naming a few and counting the rest', () => {
    for (const spell of [
      (o: number) => `${o}.0.0.0/8`,
      (o: number) => `::ffff:${o}.0.0.0/104`,
      (o: number) => `${o}.0.0.0/255.0.0.0`,
    ]) {
      const entries = Array.from({ length: 255 }, (_, index) => spell(index + 1));
      const issues = issuesOf({ ...VALID_ENV, OBV_TRUST_PROXY: entries.join(',') });
      assert.ok(issues.length > 0 && issues.every((line) => line.startsWith('OBV_TRUST_PROXY: ')), issues.join('\n'));
      assert.ok(issues.length <= 7, `a bounded message: ${issues.length} lines`);
      assert.ok(
        issues.some((line) => line.includes(spell(1))),
        issues.join('\n'),
      );
      assert.ok(
        issues.some((line) => /and \d+ more entries/.test(line)),
        issues.join('\n'),
      );
    }
  });

  test('refuses a single public /8 (or as wide as /11) that the old rule let through, in each spelling', () => {
    for (const wide of [
      '1.0.0.0/8',
      '8.0.0.0/255.0.0.0',
      '::ffff:8.0.0.0/104',
      '::ffff:808:0/104',
      '64.0.0.0/11',
      '0:0:0:0:0:ffff:4000:0/107',
    ]) {
      const issues = issuesOf({ ...VALID_ENV, OBV_TRUST_PROXY: wide });
      assert.deepEqual(
        issues.map((line) => line.split(':')[0]),
        ['OBV_TRUST_PROXY'],
        wide,
      );
      assert.match(issues[0] ?? '', /public/, wide);
    }
    assert.equal(everyPublicSlash8.length, 253);
  });

  test('refuses many narrow public ranges that add up to a broad one', () => {
    const entries = Array.from({ length: 5 }, (_, index) => `${20 + index}.0.0.0/12`);
    const issues = issuesOf({ ...VALID_ENV, OBV_TRUST_PROXY: entries.join(',') });
    assert.deepEqual(
      issues.map((line) => line.split(':')[0]),
      ['OBV_TRUST_PROXY'],
      issues.join('\n'),
    );
    assert.match(issues[0] ?? '', /5,242,880 public IPv4 addresses/);
  });

  test('refuses what proxy-addr (Express) would read differently or not at all', () => {
    for (const bad of ['::1.2.3.4', '10.0.0.0/0']) {
      assert.deepEqual(
        issuesOf({ ...VALID_ENV, OBV_TRUST_PROXY: bad }).map((line) => line.split(':')[0]),
        ['OBV_TRUST_PROXY'],
        bad,
      );
    }
  });

  test("accepts private, loopback, link-local and CGNAT ranges in full, and a CDN's published ranges", () => {
    const cloudflare =
      '173.245.48.0/20,103.21.244.0/22,103.22.200.0/22,103.31.4.0/22,141.101.64.0/18,108.162.192.0/18,190.93.240.0/20,' +
      '188.114.96.0/20,197.234.240.0/22,198.41.128.0/17,162.158.0.0/15,104.16.0.0/13,104.24.0.0/14,172.64.0.0/13,131.0.72.0/22';
    for (const fine of [
      '10.0.0.0/8',
      '172.16.0.0/12',
      '192.168.0.0/16',
      '127.0.0.0/8',
      '169.254.0.0/16',
      '100.64.0.0/10',
      '::ffff:10.0.0.0/104',
      '10.0.0.0/255.0.0.0',
      '203.0.113.0/24',
      cloudflare,
    ]) {
      assert.ok(configFromEnv({ ...VALID_ENV, OBV_TRUST_PROXY: fine }).trustProxy, fine);
    }
  });
});

describe('OBV_TRUST_PROXY: no hop count or list a client could hide behind (issue 39 §5)', () => {
  test('refuses 1000 hops (any client would choose its own address), in env and in code; accepts the chains deployments have', () => {
    for (const hops of ['1000', '6', '65535']) {
      const issues = issuesOf({ ...VALID_ENV, OBV_TRUST_PROXY: hops });
      assert.deepEqual(
        issues.map((line) => line.split(':')[0]),
        ['OBV_TRUST_PROXY'],
        hops,
      );
      assert.match(issues[0] ?? '', /hops is more than any chain of proxies \(at most 5\)/);
    }
    assert.throws(
      () => parseProxyConfig({ ...sandboxProxyConfig('http://127.0.0.1:9', 'http://127.0.0.1:1'), trustProxy: 1000 }),
      (error: unknown) => error instanceof ConfigError && error.issues[0]?.setting === 'trustProxy',
    );
    for (const hops of ['0', '1', '2', '5'])
      assert.equal(configFromEnv({ ...VALID_ENV, OBV_TRUST_PROXY: hops }).trustProxy, Number(hops));
  });

  test('refuses a 4096-entry IPv6 list (every entry narrow), and public IPv6 adding up to more than a /26', () => {
    const many = Array.from({ length: 4096 }, (_, index) => `2001:db8:${index.toString(16)}::/48`).join(',');
    const issues = issuesOf({ ...VALID_ENV, OBV_TRUST_PROXY: many });
    assert.deepEqual(
      issues.map((line) => line.split(':')[0]),
      ['OBV_TRUST_PROXY'],
      issues.join('\n'),
    );
    assert.match(issues[0] ?? '', /lists 4,096 entries, more than 256/);
    assert.ok(issues[0]!.length < 300, 'one short line, not 4096 entries');
    const slash32s = Array.from(
      { length: 65 },
      (_, index) => `2a0${index % 10}:${(index + 16).toString(16)}00::/32`,
    ).join(',');
    const wide = issuesOf({ ...VALID_ENV, OBV_TRUST_PROXY: slash32s });
    assert.deepEqual(
      wide.map((line) => line.split(':')[0]),
      ['OBV_TRUST_PROXY'],
      wide.join('\n'),
    );
    assert.match(wide[0] ?? '', /as much public IPv6 space as 65 \/32s, more than 64/);
    // A CDN's IPv6 /32s (Cloudflare's, but for its /29, which the /32 rule refuses), and unique-local space of any width pass.
    const cloudflare6 = '2400:cb00::/32,2606:4700::/32,2803:f800::/32,2405:b500::/32,2405:8100::/32,2c0f:f248::/32';
    for (const fine of [
      cloudflare6,
      'fd00::/8,fe80::/10',
      Array.from({ length: 256 }, (_, index) => `10.0.${index}.1`).join(','),
    ]) {
      assert.ok(configFromEnv({ ...VALID_ENV, OBV_TRUST_PROXY: fine }).trustProxy, fine);
    }
  });
});

describe('limits beyond sane bounds are said at boot (issue 39 §5)', () => {
  test('a limit of 1,000,000 is one line naming its variable; the defaults and a raised but sane limit say nothing', () => {
    const config = configFromEnv({
      ...VALID_ENV,
      ...GATEWAY,
      OBV_MERCHANT_API_KEY: 'Zx8kQ2mN7vB4tR9wL1pS6yH3jD5fG0cA',
      OBV_RATE_LIMIT: '1000000',
      OBV_AUTH_FAILURE_LIMIT: '1000000',
      OBV_WS_MAX_PER_SESSION: '1000000',
      OBV_WS_MAX_PER_CLIENT: '1000000',
      OBV_WS_MAX_TOTAL: '1000000',
    });
    const warnings = protectionWarnings(config);
    for (const name of [
      'OBV_RATE_LIMIT',
      'OBV_AUTH_FAILURE_LIMIT',
      'OBV_WS_MAX_PER_SESSION',
      'OBV_WS_MAX_PER_CLIENT',
      'OBV_WS_MAX_TOTAL',
    ]) {
      const lines = warnings.filter((line) => line.startsWith(`${name}=1000000: 1,000,000 `));
      assert.equal(lines.length, 1, `${name}: ${warnings.join('\n')}`);
      assert.match(lines[0]!, /limits nothing/);
    }
    assert.equal(warnings.length, 5, warnings.join('\n'));
    const raised = configFromEnv({
      ...VALID_ENV,
      ...GATEWAY,
      OBV_MERCHANT_API_KEY: 'Zx8kQ2mN7vB4tR9wL1pS6yH3jD5fG0cA',
      OBV_RATE_LIMIT: '120',
      OBV_WS_MAX_TOTAL: '50000',
    });
    assert.deepEqual(protectionWarnings(raised), []);
    // More sockets than the process may open files: said, with the limit it would meet.
    assert.deepEqual(
      protectionWarnings(raised, 1024).map((line) => line.split(':')[0]),
      ['OBV_WS_MAX_TOTAL=50000'],
    );
  });

  test('createObvProxy logs the line at boot', (t) => {
    const logs = captureLogs('info');
    const proxy = createObvProxy({
      ...sandboxProxyConfig('http://127.0.0.1:9', 'http://127.0.0.1:1'),
      rateLimit: 1_000_000,
      logger: logs.logger,
    });
    t.after(() => proxy.close());
    assert.equal(logs.find('OBV_RATE_LIMIT=1000000').length, 1);
  });
});

describe('production secrets: one role each', () => {
  const sealingBytes = Buffer.from(SEALING_KEY, 'base64');

  test('refuses a sealing key that is the webhook secret or an events secret (their holders could open every saved account)', () => {
    const asWhsec = `whsec_${SEALING_KEY}`;
    const webhook = issuesOf({ ...VALID_ENV, OBV_WEBHOOK_SECRET: asWhsec });
    assert.deepEqual(
      webhook.map((line) => line.split(':')[0]),
      ['OBV_SEALING_KEYS'],
      webhook.join('\n'),
    );
    assert.match(webhook[0] ?? '', /OBV_WEBHOOK_SECRET/);
    const events = issuesOf({
      ...VALID_ENV,
      OBV_EVENTS_URL: 'https://shop.example/obv-events',
      OBV_EVENTS_SECRETS: `whsec_${sealingBytes.toString('base64').replace(/=+$/, '')}`,
    });
    assert.deepEqual(
      events.map((line) => line.split(':')[0]),
      ['OBV_SEALING_KEYS'],
      events.join('\n'),
    );
    assert.match(events[0] ?? '', /OBV_EVENTS_SECRETS/);
  });

  test('refuses an API key that is the client secret, an events secret, the webhook secret or a sealing key (that one on OBV_SEALING_KEYS)', () => {
    const apiKey = 'Zx8kQ2mN7vB4tR9wL1pS6yH3jD5fG0cA';
    const eventsSecret = `whsec_${randomBytes(32).toString('base64')}`;
    const cases: [Record<string, string>, string][] = [
      [{ OBV_CLIENT_SECRET: apiKey, OBV_MERCHANT_API_KEY: apiKey }, 'OBV_CLIENT_SECRET'],
      [
        {
          OBV_EVENTS_URL: 'https://shop.example/e',
          OBV_EVENTS_SECRETS: eventsSecret,
          OBV_MERCHANT_API_KEY: eventsSecret,
        },
        'OBV_EVENTS_SECRETS',
      ],
      [
        {
          OBV_EVENTS_URL: 'https://shop.example/e',
          OBV_EVENTS_SECRETS: eventsSecret,
          OBV_MERCHANT_API_KEY: eventsSecret.slice('whsec_'.length),
        },
        'OBV_EVENTS_SECRETS',
      ],
      [{ OBV_MERCHANT_API_KEY: VALID_ENV.OBV_WEBHOOK_SECRET }, 'OBV_WEBHOOK_SECRET'],
      // Reported on the secret that opens more: the sealing key.
      [{ OBV_MERCHANT_API_KEY: SEALING_KEY }, 'OBV_SEALING_KEYS: key k1 is the same secret as OBV_MERCHANT_API_KEY'],
      [
        { OBV_MERCHANT_API_KEY: `k1:${SEALING_KEY}` },
        'OBV_SEALING_KEYS: key k1 is the same secret as OBV_MERCHANT_API_KEY',
      ],
    ];
    for (const [env, other] of cases) {
      const issues = issuesOf({ ...VALID_ENV, ...GATEWAY, ...env });
      assert.equal(issues.length, 1, `${other}: ${issues.join('\n')}`);
      if (!other.includes(':'))
        assert.match(issues[0] ?? '', new RegExp(`^OBV_MERCHANT_API_KEY: is the same secret as ${other}:`));
      assert.ok(issues[0]?.includes(other), issues[0]);
      assert.ok(!issues[0]?.includes(env.OBV_MERCHANT_API_KEY!), 'the secret itself is not in the message');
    }
  });

  test('refuses an API key that is a sealing key written in hex (either case) or base64 of any kind (issue 39 §5)', () => {
    const forms = {
      hex: sealingBytes.toString('hex'),
      HEX: sealingBytes.toString('hex').toUpperCase(),
      base64: sealingBytes.toString('base64'),
      unpadded: sealingBytes.toString('base64').replace(/=+$/, ''),
      base64url: sealingBytes.toString('base64url'),
    };
    for (const [form, key] of Object.entries(forms)) {
      for (const env of [{ OBV_MERCHANT_API_KEY: key }, { OBV_MERCHANT_API_KEYS: `shop:${key}` }] as Record<
        string,
        string
      >[]) {
        const issues = issuesOf({ ...VALID_ENV, ...GATEWAY, ...env });
        assert.equal(issues.length, 1, `${form}: ${issues.join('\n')}`);
        assert.match(issues[0] ?? '', /^OBV_SEALING_KEYS: key k1 is the same secret as OBV_MERCHANT_API_KEYS?:/, form);
        assert.ok(!issues[0]!.includes(key), 'the secret itself is not in the message');
      }
    }
    // Another key's hex is another secret.
    assert.ok(
      configFromEnv({ ...VALID_ENV, ...GATEWAY, OBV_MERCHANT_API_KEY: randomBytes(32).toString('hex') }).merchantApiKey,
    );
  });

  test('allows reuse in sandbox mode (local only) and different secrets anywhere', () => {
    const apiKey = 'Zx8kQ2mN7vB4tR9wL1pS6yH3jD5fG0cA';
    assert.ok(configFromEnv({ ...VALID_ENV, ...GATEWAY, OBV_MERCHANT_API_KEY: apiKey }).merchantApiKey);
    assert.ok(
      configFromEnv({
        OBV_SANDBOX: 'true',
        OBV_BASE_URL: 'http://127.0.0.1:4010',
        OBV_PUBLIC_URL: 'http://127.0.0.1:3000',
        OBV_CLIENT_SECRET: apiKey,
        OBV_MERCHANT_API_KEY: apiKey,
      }).merchantApiKey,
    );
  });
});

describe('OBV_MERCHANT_API_KEY: no patterned key', () => {
  test('refuses sequences, repeats and short cycles however long and varied', () => {
    for (const key of [
      'abcdefghijklmnopqrstuvwxyz012345',
      'abcdefghijklmnopqrstuvwxyzABCDEFGHIJ',
      '0123456789abcdefghijABCDEFGHIJ0123456789',
      'Passw0rd!Passw0rd!Passw0rd!Passw0rd!',
      'zyxwvutsrqponmlkjihgfedcba9876543210',
      'aceg'.repeat(3) + 'ikmoqsuwy'.repeat(3),
    ]) {
      const issues = issuesOf({ ...VALID_ENV, ...GATEWAY, OBV_MERCHANT_API_KEY: key });
      assert.deepEqual(
        issues.map((line) => line.split(':')[0]),
        ['OBV_MERCHANT_API_KEY'],
        key,
      );
      assert.match(issues[0] ?? '', /random/, key);
    }
  });

  test('accepts random keys: base64, base64url and hex of 24+ random bytes, every time', () => {
    for (let round = 0; round < 300; round++) {
      for (const key of [
        randomBytes(24).toString('base64'),
        randomBytes(32).toString('base64url'),
        randomBytes(16).toString('hex'),
      ]) {
        assert.ok(configFromEnv({ ...VALID_ENV, ...GATEWAY, OBV_MERCHANT_API_KEY: key }).merchantApiKey, key);
      }
    }
    assert.ok(
      configFromEnv({ ...VALID_ENV, ...GATEWAY, OBV_MERCHANT_API_KEY: 'Zx8kQ2mN7vB4tR9wL1pS6yH3jD5fG0cA' })
        .merchantApiKey,
    );
  });

  test('accepts the rare random hex key with only 8 distinct characters (about one `openssl rand -hex 16` in 30,000)', () => {
    const key = '3a7f0c3e9a70f3c7e0a9c3f7a0e9c37f';
    assert.equal(new Set(key).size, 8);
    assert.ok(configFromEnv({ ...VALID_ENV, ...GATEWAY, OBV_MERCHANT_API_KEY: key }).merchantApiKey);
  });
});

describe('protections switched off are said at boot, one line each', () => {
  test('none for the production defaults', () => {
    assert.deepEqual(
      protectionWarnings(
        configFromEnv({ ...VALID_ENV, ...GATEWAY, OBV_MERCHANT_API_KEY: 'Zx8kQ2mN7vB4tR9wL1pS6yH3jD5fG0cA' }),
      ),
      [],
    );
    assert.deepEqual(listenerWarnings(configFromEnv({ ...VALID_ENV, OBV_METRICS_PORT: '9464' })), []);
    assert.deepEqual(
      listenerWarnings(configFromEnv({ ...VALID_ENV, OBV_METRICS_PORT: '9464', OBV_METRICS_HOST: '::1' })),
      [],
    );
  });

  test('bank step binding off, no start limit, no API-key failure limit, trace logging and Redis without a password', () => {
    const config = configFromEnv({
      ...VALID_ENV,
      ...GATEWAY,
      OBV_MERCHANT_API_KEY: 'Zx8kQ2mN7vB4tR9wL1pS6yH3jD5fG0cA',
      OBV_BIND_BANK_STEP: 'false',
      OBV_RATE_LIMIT: '0',
      OBV_AUTH_FAILURE_LIMIT: '0',
      OBV_LOG_LEVEL: 'trace',
      OBV_REDIS_URL: 'redis://redis.internal:6379/0',
    });
    const warnings = protectionWarnings(config);
    assert.equal(warnings.length, 5, warnings.join('\n'));
    for (const name of [
      'OBV_BIND_BANK_STEP',
      'OBV_RATE_LIMIT',
      'OBV_AUTH_FAILURE_LIMIT',
      'OBV_LOG_LEVEL',
      'OBV_REDIS_URL',
    ]) {
      assert.equal(warnings.filter((line) => line.startsWith(`${name}`)).length, 1, name);
    }
    assert.ok(
      warnings.every((line) => !line.includes('\n')),
      'one line each',
    );
    assert.ok(!warnings.join().includes('redis.internal'), 'the Redis URL is not repeated');
    assert.deepEqual(
      protectionWarnings(configFromEnv({ ...VALID_ENV, OBV_REDIS_URL: 'rediss://:s3cret@redis.internal:6380' })),
      [],
    );
  });

  test('npm start: a metrics listener beyond loopback is said once, and its log line names the real host', async (t) => {
    const logs = captureLogs('info');
    const config = parseProxyConfig({
      ...sandboxProxyConfig('http://127.0.0.1:9', 'http://127.0.0.1:1'),
      port: 0,
      host: '127.0.0.1',
      metricsPort: 0,
      metricsHost: '0.0.0.0',
    });
    assert.equal(listenerWarnings(config).length, 1);
    const servers = await startProxyServers(config, { logger: logs.logger, defaultMetrics: false });
    t.after(() => servers.shutdown());
    const [ready] = logs.find('metrics listener ready') as { url?: string }[];
    assert.match(ready?.url ?? '', /^http:\/\/0\.0\.0\.0:\d+\/metrics$/);
    assert.equal(logs.find('OBV_METRICS_HOST').length, 1);
  });
});
