// `npx obv-link-proxy doctor [--json]`: the configuration in the environment checked against the real
// world before traffic, one line per check, each failure naming its cause and the fix. Nothing here
// changes the provider's or the merchant's state: one token, one signed test event, reads.
// Exit codes: 0 every check passed, 1 one failed, 2 settings that do not parse.
import http from 'node:http';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { ConfigError, configFromEnv, type ProxyConfig } from '../config/schema.ts';
import { createLogger } from '../common/logger.ts';
import { TokenManager } from '../upstream/token-manager.ts';
import { TokenError } from '../upstream/errors.ts';
import { privateCaAdvice, untrustedCertificateCode } from '../upstream/tls-trust.ts';
import { sendTestEvents } from '../events/test-events.ts';
import { DataDirectoryError, prepareDataDirectory } from '../storage/sqlite/data-directory.ts';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** What to do, for a failed check. */
  fix?: string;
}

const TIMEOUT_MS = 10_000;

/** The innermost code or message of a failed fetch (`fetch failed` says nothing; its cause does). */
function reason(error: unknown): { code?: string; text: string } {
  let current: unknown = error;
  while (current instanceof Error && current.cause instanceof Error) current = current.cause;
  const code = (current as NodeJS.ErrnoException | undefined)?.code;
  const text = current instanceof Error ? current.message : String(current);
  return { code, text: code && !text.includes(code) ? `${code}: ${text}` : text };
}

function untrusted(error: unknown, variable: string): string | undefined {
  const code = untrustedCertificateCode(error);
  return code ? privateCaAdvice(code, variable) : undefined;
}

/** The provider answers over TLS this Node trusts (any HTTP status will do: the handshake is the check). */
async function providerTls(config: ProxyConfig): Promise<Check> {
  const name = 'provider TLS';
  try {
    const response = await fetch(new URL('/', config.baseUrl), {
      method: 'HEAD',
      redirect: 'manual',
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    await response.body?.cancel().catch(() => undefined);
    const secure = new URL(config.baseUrl).protocol === 'https:';
    return {
      name,
      ok: true,
      detail: `${config.baseUrl} answered${secure ? ' over TLS this Node trusts' : ' (plain http: sandbox mode)'}`,
    };
  } catch (error) {
    const { text } = reason(error);
    return {
      name,
      ok: false,
      detail: `${config.baseUrl} could not be reached: ${text}`,
      fix:
        untrusted(error, 'OBV_BASE_URL') ??
        "check OBV_BASE_URL (the provider's API host) and that this machine may reach it",
    };
  }
}

/** Endpoint 1 issues a token for OBV_CLIENT_ID / OBV_CLIENT_SECRET. */
async function credentials(config: ProxyConfig): Promise<Check> {
  const name = 'credentials';
  const tokens = new TokenManager({
    baseUrl: config.baseUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    scope: config.tokenScope,
    timeoutMs: config.upstreamTimeoutMs,
    retryLimit: 0,
    logger: createLogger('silent'),
  });
  try {
    await tokens.getToken();
    return { name, ok: true, detail: 'the provider issued a token for OBV_CLIENT_ID / OBV_CLIENT_SECRET' };
  } catch (error) {
    if (error instanceof TokenError) {
      return {
        name,
        ok: false,
        detail: `the provider refused OBV_CLIENT_ID / OBV_CLIENT_SECRET (${error.sentCode})`,
        fix: 'copy the client id and secret the provider issued for this environment (test and production differ)',
      };
    }
    const { text } = reason(error);
    return {
      name,
      ok: false,
      detail: `no token: ${text}`,
      fix: untrusted(error, 'OBV_BASE_URL') ?? 'see the provider TLS check',
    };
  }
}

/**
 * OBV_PUBLIC_URL reaches this machine's proxy over https. With the proxy running (PORT taken), its
 * return page's script must come back through the URL; before the first start, doctor answers on
 * HOST:PORT itself for a moment, so the TLS proxy or balancer in front is checked before any traffic.
 */
async function publicUrl(config: ProxyConfig): Promise<Check> {
  const name = 'public URL';
  const url = `${config.publicUrl.replace(/\/+$/, '')}${config.mountPath}/return-page.js`;
  if (new URL(url).protocol !== 'https:' && !config.sandbox) {
    return {
      name,
      ok: false,
      detail: `${config.publicUrl} is not https`,
      fix: 'put TLS in front of the proxy and set OBV_PUBLIC_URL to its https URL',
    };
  }
  const nonce = randomBytes(12).toString('hex');
  const stand = http.createServer((req, res) => {
    const ours = req.url?.split('?')[0] === `${config.mountPath}/return-page.js`;
    res
      .writeHead(ours ? 200 : 404, { 'content-type': 'text/javascript', 'x-obv-doctor': nonce })
      .end(ours ? '// obv-link doctor\n' : '');
  });
  const standing = await new Promise<boolean>((resolve) => {
    stand.once('error', () => resolve(false)); // EADDRINUSE: the proxy runs there
    stand.listen(config.port, config.host, () => resolve(true));
  });
  try {
    const response = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
    const body = await response.text();
    const served = response.status === 200 && (response.headers.get('content-type') ?? '').includes('javascript');
    if (standing && response.headers.get('x-obv-doctor') !== nonce) {
      return {
        name,
        ok: false,
        detail: `${url} answered ${response.status}, but not from this machine's ${config.host ?? '*'}:${config.port}`,
        fix: 'point the TLS proxy or load balancer in front at HOST:PORT of this machine',
      };
    }
    if (!served || body.length === 0) {
      return {
        name,
        ok: false,
        detail: `${url} answered ${response.status}, not the return page's script`,
        fix: 'forward OBV_PUBLIC_URL + OBV_MOUNT_PATH to the proxy, path unchanged',
      };
    }
    return {
      name,
      ok: true,
      detail: `${url} serves the return page${standing ? ` (answered by doctor on ${config.host ?? '*'}:${config.port}; the proxy is not running)` : ''}`,
    };
  } catch (error) {
    const { text } = reason(error);
    return {
      name,
      ok: false,
      detail: `${url} could not be reached: ${text}`,
      fix:
        untrusted(error, 'OBV_PUBLIC_URL') ??
        'check OBV_PUBLIC_URL, its DNS and the TLS proxy or balancer in front of this machine',
    };
  } finally {
    if (standing) await new Promise((resolve) => stand.close(resolve));
  }
}

/** The merchant's endpoint answers 2xx to a signed test event. */
async function eventsEndpoint(config: ProxyConfig): Promise<Check | undefined> {
  if (!config.eventsUrl || !config.eventsSecrets?.length) return undefined;
  const name = 'events endpoint';
  const [result] = await sendTestEvents(
    { eventsUrl: config.eventsUrl, eventsSecrets: config.eventsSecrets, timeoutMs: TIMEOUT_MS },
    'link.succeeded',
  );
  if (result && !result.error)
    return {
      name,
      ok: true,
      detail: `${config.eventsUrl} answered ${result.status} to a signed test event (link.succeeded, order-test-0001)`,
    };
  const refused = result?.status !== undefined && result.status >= 400 && result.status < 500;
  return {
    name,
    ok: false,
    detail: `${config.eventsUrl}: ${result?.error ?? 'no answer'}`,
    fix: refused
      ? 'your endpoint refused a signed event: does it check signatures with one of OBV_EVENTS_SECRETS?'
      : 'check OBV_EVENTS_URL and that your server is up',
  };
}

/** The boot's data directory check (storage/sqlite/data-directory.ts), for SQLite storage. */
function dataDirectory(config: ProxyConfig): Check | undefined {
  if (config.storage !== 'sqlite') return undefined;
  const name = 'data directory';
  const existed = existsSync(config.dataDir);
  try {
    const dir = prepareDataDirectory(config.dataDir);
    return { name, ok: true, detail: `${dir} is the proxy user's, 0700${existed ? '' : ' (created now)'}` };
  } catch (error) {
    if (!(error instanceof DataDirectoryError)) throw error;
    return {
      name,
      ok: false,
      detail: error.message,
      fix: 'run doctor as the proxy\'s user; see docs/GOING-TO-PRODUCTION.md "The data directory"',
    };
  }
}

/** OBV_REDIS_MIN_REPLICAS against the replicas INFO replication counts (storage/redis/replicas.ts). */
function redisReplicas(config: ProxyConfig, connected: number | undefined): Check {
  const wanted = config.redisMinReplicas;
  const name = 'Redis replicas';
  const doc = 'docs/SEVERAL-INSTANCES.md "Redis with replicas: waiting for them"';
  if (connected === undefined)
    return { name, ok: true, detail: 'INFO replication does not say how many replicas are connected' };
  if (connected < wanted) {
    return {
      name,
      ok: false,
      detail: `OBV_REDIS_MIN_REPLICAS is ${wanted} but ${connected} replica(s) are connected: every payment would answer 503`,
      fix: `connect ${wanted} replica(s) to this Redis, or lower OBV_REDIS_MIN_REPLICAS (${doc})`,
    };
  }
  if (wanted === 0 && connected > 0) {
    return {
      name,
      // In production a failover to that replica can lose a payment's claim, and charge an order twice.
      ok: config.sandbox,
      detail: `${connected} replica(s) connected but OBV_REDIS_MIN_REPLICAS is 0: a failover loses what they had not received, a payment's claim included`,
      ...(config.sandbox ? {} : { fix: `OBV_REDIS_MIN_REPLICAS=1 (${doc})` }),
    };
  }
  return {
    name,
    ok: true,
    detail:
      wanted === 0
        ? 'no replica connected, none waited for (OBV_REDIS_MIN_REPLICAS 0)'
        : `${connected} replica(s) connected; each money write waits for ${wanted}`,
  };
}

/** Redis answers, and keeps its writes across its own restart. */
async function redis(config: ProxyConfig): Promise<Check[]> {
  if (config.storage !== 'redis' || !config.redisUrl) return [];
  const { createRedisConnection, closeConnection, waitUntilReady } = await import('../storage/redis/connection.ts');
  const { redisPersistence } = await import('../storage/redis/persistence.ts');
  const connection = createRedisConnection({
    url: config.redisUrl,
    sentinels: config.redisSentinels,
    sentinelName: config.redisSentinelName,
    role: 'doctor',
  });
  try {
    try {
      await waitUntilReady(connection, 5_000);
    } catch {
      return [
        {
          name: 'Redis',
          ok: false,
          detail: 'OBV_REDIS_URL did not answer within 5 s',
          fix: 'check OBV_REDIS_URL (host, port, password) and that this machine may reach it',
        },
      ];
    }
    const persistence = await redisPersistence(connection);
    const { connectedReplicas } = await import('../storage/redis/replicas.ts');
    return [
      { name: 'Redis', ok: true, detail: 'OBV_REDIS_URL answers' },
      {
        name: 'Redis persistent',
        ok: persistence.persistent,
        detail: persistence.detail,
        ...(persistence.persistent
          ? {}
          : { fix: 'redis.conf: appendonly yes (docs/SEVERAL-INSTANCES.md "Keeping outcomes durable")' }),
      },
      redisReplicas(config, await connectedReplicas(connection)),
    ];
  } finally {
    await closeConnection(connection);
  }
}

/**
 * PostgreSQL answers, its schema is one this release runs (or migrates at start), and it is a primary
 * that keeps a commit once it said so: not a standby (`pg_is_in_recovery()`), `fsync` on, and
 * `synchronous_commit` not off (a payment acknowledged must survive the server's crash).
 */
async function postgres(config: ProxyConfig): Promise<Check[]> {
  if (config.storage !== 'postgres' || !config.databaseUrl) return [];
  const { loadPg } = await import('../storage/postgres/packages.ts');
  const { redactedDatabaseUrl } = await import('../storage/postgres/options.ts');
  const { SCHEMA_VERSION } = await import('../storage/postgres/schema.ts');
  const schema = config.databaseSchema;
  const where = redactedDatabaseUrl(config.databaseUrl, schema);
  let pg: ReturnType<typeof loadPg>;
  try {
    pg = loadPg();
  } catch (error) {
    return [{ name: 'PostgreSQL', ok: false, detail: (error as Error).message, fix: 'npm install pg' }];
  }
  const client = new pg.Client({
    connectionString: config.databaseUrl,
    application_name: 'obv-link:doctor',
    connectionTimeoutMillis: 5_000,
    statement_timeout: 5_000,
  });
  client.on('error', () => undefined); // a connection the server ends after the checks: nothing to do
  try {
    await client.connect();
  } catch (error) {
    return [
      {
        name: 'PostgreSQL',
        ok: false,
        detail: `${where} could not be reached: ${reason(error).text}`,
        fix: 'check OBV_DATABASE_URL (host, port, user, password, database) and that this machine may reach it',
      },
    ];
  }
  try {
    const [server] = (
      await client.query<{ version: string; recovery: boolean; fsync: string; commit: string }>(
        "SELECT current_setting('server_version') AS version, pg_is_in_recovery() AS recovery, " +
          "current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS commit",
      )
    ).rows;
    const [migrations] = (
      await client.query<{ present: boolean }>('SELECT to_regclass($1) IS NOT NULL AS present', [
        `${schema}.schema_migrations`,
      ])
    ).rows;
    // The schema name is a plain lower-case SQL name (the settings' check): no quoting needed.
    const version = migrations?.present
      ? Number(
          (
            await client.query<{ version: number | null }>(
              `SELECT max(version) AS version FROM ${schema}.schema_migrations`,
            )
          ).rows[0]?.version ?? 0,
        )
      : 0;
    const checks: Check[] = [
      { name: 'PostgreSQL', ok: true, detail: `${where} answers (PostgreSQL ${server!.version})` },
    ];
    checks.push(
      version > SCHEMA_VERSION
        ? {
            name: 'PostgreSQL schema',
            ok: false,
            detail: `schema ${schema} was migrated by a newer obv-link (version ${version}; this release knows ${SCHEMA_VERSION}): this proxy would refuse it`,
            fix: 'run the newer obv-link, or restore a backup taken by this one (docs/GOING-TO-PRODUCTION.md "Backup and restore")',
          }
        : {
            name: 'PostgreSQL schema',
            ok: true,
            detail:
              version === SCHEMA_VERSION
                ? `schema ${schema} is at version ${version}, this release's`
                : `schema ${schema} is at version ${version}; the proxy migrates it to ${SCHEMA_VERSION} at its start`,
          },
    );
    const problems = [
      ...(server!.recovery
        ? [
            'the server is a standby (pg_is_in_recovery() is true): it takes no writes; point OBV_DATABASE_URL at the primary',
          ]
        : []),
      ...(server!.fsync !== 'on'
        ? [`fsync is ${server!.fsync}: a crash of the server can lose what it acknowledged`]
        : []),
      ...(server!.commit === 'off'
        ? ['synchronous_commit is off: a commit is acknowledged before it is on disk, so a crash can lose a payment']
        : []),
    ];
    checks.push({
      name: 'PostgreSQL persistent',
      ok: problems.length === 0,
      detail:
        problems.length === 0
          ? `a primary with fsync on and synchronous_commit ${server!.commit}`
          : problems.join('; '),
      ...(problems.length === 0
        ? {}
        : {
            fix: 'postgresql.conf: fsync = on, synchronous_commit = on, and OBV_DATABASE_URL naming the primary (docs/SEVERAL-INSTANCES.md)',
          }),
    });
    return checks;
  } catch (error) {
    return [
      {
        name: 'PostgreSQL',
        ok: false,
        detail: `${where} answered, but its checks failed: ${reason(error).text}`,
        fix: 'check that the OBV_DATABASE_URL user may connect and read the schema',
      },
    ];
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Every check of `config`, in order. */
export async function runChecks(config: ProxyConfig): Promise<Check[]> {
  const tls = await providerTls(config);
  return [
    tls,
    await credentials(config),
    await publicUrl(config),
    await eventsEndpoint(config),
    dataDirectory(config),
    ...(await redis(config)),
    ...(await postgres(config)),
  ].filter((check): check is Check => check !== undefined);
}

/** Runs `npx obv-link-proxy doctor [--json]`; returns the exit code. */
export async function doctorFromCli(
  args: string[],
  env: NodeJS.ProcessEnv,
  out: (text: string) => void,
): Promise<number> {
  const json = args.includes('--json');
  const unknown = args.filter((arg) => arg !== '--json');
  if (unknown.length > 0) {
    out(`doctor: unknown argument ${unknown[0]}; see npx obv-link-proxy doctor --help\n`);
    return 2;
  }
  let config: ProxyConfig;
  try {
    config = configFromEnv(env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    out(
      json
        ? `${JSON.stringify({ ok: false, checks: [{ name: 'settings', ok: false, detail: error.message }] })}\n`
        : `${error.message}\n`,
    );
    return 2;
  }
  const checks = [
    { name: 'settings', ok: true, detail: `read from the environment${config.sandbox ? ' (sandbox mode)' : ''}` },
    ...(await runChecks(config)),
  ];
  const ok = checks.every((check) => check.ok);
  if (json) {
    out(`${JSON.stringify({ ok, checks })}\n`);
  } else {
    for (const check of checks)
      out(
        `${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}${check.fix ? `\n     fix: ${check.fix}` : ''}\n`,
      );
    out(
      ok
        ? 'doctor: every check passed; start the proxy: npx obv-link-proxy\n'
        : `doctor: ${checks.filter((check) => !check.ok).length} check(s) failed\n`,
    );
  }
  return ok ? 0 : 1;
}
