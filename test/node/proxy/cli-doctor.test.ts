// `npx obv-link-proxy doctor --json` against a production-shaped world on loopback: the sandbox bank over
// https with a certificate of a private CA, a TLS front forwarding OBV_PUBLIC_URL to HOST:PORT, the
// merchant's events endpoint over https checking signatures. Good settings pass every check; each broken
// one fails its own check, naming the cause: a wrong client secret, a missing CA, an unreachable public
// URL, a wrong events secret, a Redis without its append-only file, a PostgreSQL that cannot be reached,
// was migrated by a newer release, is a standby or does not keep what it acknowledged.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { createProvider } from '../../../sandbox/index.ts';
import { freePort } from '../../helpers/free-port.ts';
import { makePrivateCa, type PrivateCa } from '../../helpers/private-ca.ts';
import { redisSkipReason, startRedisServer } from '../../helpers/redis-server.ts';
import { postgresSkipReason, startPostgresServer, startStandby } from '../../helpers/postgres-server.ts';
import { SCHEMA_VERSION } from '../../../proxy/storage/postgres/schema.ts';

interface Report {
  ok: boolean;
  checks: { name: string; ok: boolean; detail: string; fix?: string }[];
}

const CLIENT = { clientId: 'doctor-client', clientSecret: randomBytes(24).toString('base64url') };
const WEBHOOK_SECRET = `whsec_${randomBytes(32).toString('base64')}`;
const EVENTS_SECRET = `whsec_${randomBytes(32).toString('base64')}`;

async function listen(server: https.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

describe('npx obv-link-proxy doctor', () => {
  let dir: string;
  let ca: PrivateCa;
  const servers: https.Server[] = [];
  let env: Record<string, string>;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'obv-doctor-'));
    ca = makePrivateCa(dir);
    const tls = { key: ca.key, cert: ca.cert };
    const provider = createProvider({ clients: [{ ...CLIENT, standing: 'active' }], webhookSecret: WEBHOOK_SECRET });
    const providerServer = https.createServer(tls, provider.app);
    const port = await freePort();
    // The TLS front: what a reverse proxy does, forwarding the path to HOST:PORT.
    const front = https.createServer(tls, (req, res) => {
      fetch(`http://127.0.0.1:${port}${req.url}`).then(
        async (answer) => {
          res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()));
        },
        () => res.writeHead(502).end(),
      );
    });
    const webhook = new Webhook(EVENTS_SECRET);
    const events = https.createServer(tls, (req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        try {
          webhook.verify(body, req.headers as Record<string, string>);
          res.writeHead(204).end();
        } catch {
          res.writeHead(400).end();
        }
      });
    });
    servers.push(providerServer, front, events);
    env = {
      NODE_EXTRA_CA_CERTS: ca.caFile,
      OBV_BASE_URL: `https://127.0.0.1:${await listen(providerServer)}`,
      OBV_CLIENT_ID: CLIENT.clientId,
      OBV_CLIENT_SECRET: CLIENT.clientSecret,
      OBV_WEBHOOK_SECRET: WEBHOOK_SECRET,
      OBV_MERCHANT_ID: 'doctor-merchant',
      OBV_PUBLIC_URL: `https://127.0.0.1:${await listen(front)}`,
      OBV_SEALING_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      OBV_MERCHANT_API_KEY: randomBytes(32).toString('base64url'),
      OBV_PGW_APP_ID: 'app',
      OBV_PGW_CLIENT_ID: 'pgw',
      OBV_EVENTS_URL: `https://127.0.0.1:${await listen(events)}/obv-events`,
      OBV_EVENTS_SECRETS: EVENTS_SECRET,
      OBV_DATA_DIR: path.join(dir, 'data'),
      HOST: '127.0.0.1',
      PORT: String(port),
    };
  });

  after(() => {
    for (const server of servers) server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** doctor --json as a process (NODE_EXTRA_CA_CERTS is read at start), and its exit code. */
  function doctor(changes: Record<string, string | undefined>): Promise<{ code: number; report: Report }> {
    const childEnv = Object.fromEntries(
      Object.entries({ PATH: process.env.PATH ?? '', ...env, ...changes }).filter(([, value]) => value !== undefined),
    ) as Record<string, string>;
    return new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'proxy/cli.ts', 'doctor', '--json'],
        { env: childEnv, timeout: 60_000 },
        (error, stdout, stderr) => {
          try {
            resolve({ code: error ? Number(error.code) : 0, report: JSON.parse(stdout) as Report });
          } catch {
            reject(new Error(`doctor printed no JSON: ${stdout}\n${stderr}`));
          }
        },
      );
    });
  }

  const failed = (report: Report) => report.checks.filter((check) => !check.ok);
  const check = (report: Report, name: string) => report.checks.find((each) => each.name === name)!;

  test('passes every check on good settings (the proxy not yet running: doctor answers on HOST:PORT)', async () => {
    const { code, report } = await doctor({});
    assert.deepEqual(failed(report), []);
    assert.equal(code, 0);
    assert.deepEqual(
      report.checks.map((each) => each.name),
      ['settings', 'provider TLS', 'credentials', 'public URL', 'events endpoint', 'data directory'],
    );
    assert.match(check(report, 'public URL').detail, /serves the return page \(answered by doctor on 127\.0\.0\.1:/);
  });

  test('a wrong client secret fails the credentials check, naming the variables', async () => {
    const { code, report } = await doctor({ OBV_CLIENT_SECRET: 'not-the-secret-the-provider-issued' });
    assert.equal(code, 1);
    assert.deepEqual(
      failed(report).map((each) => each.name),
      ['credentials'],
    );
    assert.match(check(report, 'credentials').detail, /refused OBV_CLIENT_ID \/ OBV_CLIENT_SECRET \(invalid_client\)/);
  });

  test('without --json: one line per check, a failure with its fix, and a closing count', async () => {
    const childEnv = { PATH: process.env.PATH ?? '', ...env, OBV_CLIENT_SECRET: 'not-the-secret-the-provider-issued' };
    const output = await new Promise<{ code: number; stdout: string }>((resolve) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', 'proxy/cli.ts', 'doctor'],
        { env: childEnv, timeout: 60_000 },
        (error, stdout) => {
          resolve({ code: error ? Number(error.code) : 0, stdout });
        },
      );
    });
    assert.equal(output.code, 1);
    assert.match(output.stdout, /^ok {3}provider TLS: /m);
    assert.match(
      output.stdout,
      /^FAIL credentials: the provider refused OBV_CLIENT_ID \/ OBV_CLIENT_SECRET \(invalid_client\)\n {5}fix: copy the client id and secret/m,
    );
    assert.match(output.stdout, /^doctor: 1 check\(s\) failed$/m);
  });

  test('without the private CA, the provider TLS check fails naming NODE_EXTRA_CA_CERTS', async () => {
    const { code, report } = await doctor({ NODE_EXTRA_CA_CERTS: undefined });
    assert.equal(code, 1);
    const tls = check(report, 'provider TLS');
    assert.equal(tls.ok, false);
    assert.match(
      tls.detail,
      /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/,
    );
    assert.match(tls.fix ?? '', /NODE_EXTRA_CA_CERTS=/);
  });

  test('an unreachable public URL fails its check, naming the URL; a wrong events secret fails the events check', async () => {
    const closed = await freePort();
    const { code, report } = await doctor({
      OBV_PUBLIC_URL: `https://127.0.0.1:${closed}`,
      OBV_EVENTS_SECRETS: `whsec_${randomBytes(32).toString('base64')}`,
    });
    assert.equal(code, 1);
    assert.deepEqual(
      failed(report).map((each) => each.name),
      ['public URL', 'events endpoint'],
    );
    assert.match(
      check(report, 'public URL').detail,
      new RegExp(`https://127\\.0\\.0\\.1:${closed}/obv/return-page\\.js could not be reached: .*ECONNREFUSED`),
    );
    assert.match(check(report, 'events endpoint').detail, /answered 400/);
    assert.match(check(report, 'events endpoint').fix ?? '', /OBV_EVENTS_SECRETS/);
  });

  test(
    'a Redis without its append-only file fails "Redis persistent"; with it, passes',
    { skip: redisSkipReason() },
    async () => {
      const volatile = await startRedisServer({ persistent: false });
      const durable = await startRedisServer({ persistent: true });
      try {
        const bad = await doctor({ OBV_REDIS_URL: volatile.url, OBV_DATA_DIR: undefined });
        assert.equal(bad.code, 1);
        assert.deepEqual(
          failed(bad.report).map((each) => each.name),
          ['Redis persistent'],
        );
        assert.match(check(bad.report, 'Redis persistent').detail, /appendonly is off/);
        const good = await doctor({ OBV_REDIS_URL: durable.url, OBV_DATA_DIR: undefined });
        assert.deepEqual(failed(good.report), []);
        assert.equal(good.code, 0);
      } finally {
        await volatile.close();
        await durable.close();
      }
    },
  );

  test(
    '"Redis replicas": fewer connected than OBV_REDIS_MIN_REPLICAS fails, and so does a replica none waits for; enough passes',
    { skip: redisSkipReason() },
    async () => {
      const primary = await startRedisServer({ persistent: true });
      const replica = await startRedisServer({
        persistent: true,
        args: ['--replicaof', '127.0.0.1', String(primary.port)],
      });
      try {
        const withReplica = { OBV_REDIS_URL: primary.url, OBV_DATA_DIR: undefined };
        // The replica links in the background: until then the primary counts none.
        const deadline = Date.now() + 10_000;
        let waited = await doctor({ ...withReplica, OBV_REDIS_MIN_REPLICAS: '1' });
        while (!check(waited.report, 'Redis replicas').ok && Date.now() < deadline) {
          await new Promise((resolve) => setTimeout(resolve, 200));
          waited = await doctor({ ...withReplica, OBV_REDIS_MIN_REPLICAS: '1' });
        }
        assert.deepEqual(failed(waited.report), [], JSON.stringify(waited.report));
        assert.match(
          check(waited.report, 'Redis replicas').detail,
          /1 replica\(s\) connected; each money write waits for 1/,
        );

        const unwaited = await doctor(withReplica);
        assert.deepEqual(
          failed(unwaited.report).map((each) => each.name),
          ['Redis replicas'],
        );
        assert.match(check(unwaited.report, 'Redis replicas').fix ?? '', /OBV_REDIS_MIN_REPLICAS=1/);

        const tooMany = await doctor({ ...withReplica, OBV_REDIS_MIN_REPLICAS: '2' });
        assert.equal(tooMany.code, 1);
        assert.match(check(tooMany.report, 'Redis replicas').detail, /is 2 but 1 replica\(s\) are connected/);
      } finally {
        await replica.close();
        await primary.close();
      }
    },
  );

  test(
    'PostgreSQL: unreachable, a newer schema, a standby, fsync or synchronous_commit off each fail naming the cause; a durable primary passes',
    { skip: postgresSkipReason() },
    async () => {
      const primary = await startPostgresServer();
      const volatile = await startPostgresServer({ settings: { fsync: 'off', synchronous_commit: 'off' } });
      const standby = await startStandby(primary, 'doctor_standby');
      const postgresChecks = (report: Report) => report.checks.filter((each) => each.name.startsWith('PostgreSQL'));
      try {
        // Trust authentication ignores the password: here it only shows that no line repeats it.
        const withPassword = primary.url.replace('postgres@', 'postgres:doctor-s3cret@');
        const good = await doctor({ OBV_DATABASE_URL: withPassword, OBV_DATA_DIR: undefined });
        assert.deepEqual(failed(good.report), [], JSON.stringify(good.report));
        assert.equal(good.code, 0);
        assert.deepEqual(
          postgresChecks(good.report).map((each) => each.name),
          ['PostgreSQL', 'PostgreSQL schema', 'PostgreSQL persistent'],
        );
        assert.doesNotMatch(JSON.stringify(good.report), /doctor-s3cret/);
        assert.match(check(good.report, 'PostgreSQL').detail, /postgres:\*\*\*@127\.0\.0\.1/);
        assert.match(
          check(good.report, 'PostgreSQL schema').detail,
          new RegExp(`is at version 0; the proxy migrates it to ${SCHEMA_VERSION} at its start`),
        );
        assert.match(
          check(good.report, 'PostgreSQL persistent').detail,
          /a primary with fsync on and synchronous_commit on/,
        );

        const lossy = await doctor({ OBV_DATABASE_URL: volatile.url, OBV_DATA_DIR: undefined });
        assert.equal(lossy.code, 1);
        assert.deepEqual(
          failed(lossy.report).map((each) => each.name),
          ['PostgreSQL persistent'],
        );
        assert.match(check(lossy.report, 'PostgreSQL persistent').detail, /fsync is off.*synchronous_commit is off/);
        assert.match(check(lossy.report, 'PostgreSQL persistent').fix ?? '', /fsync = on, synchronous_commit = on/);

        const replica = await doctor({ OBV_DATABASE_URL: standby.url, OBV_DATA_DIR: undefined });
        assert.deepEqual(
          failed(replica.report).map((each) => each.name),
          ['PostgreSQL persistent'],
        );
        assert.match(
          check(replica.report, 'PostgreSQL persistent').detail,
          /standby \(pg_is_in_recovery\(\) is true\)/,
        );

        // A schema a newer release migrated: this proxy would refuse it, and doctor says so before it starts.
        await primary.sql(
          'CREATE SCHEMA obv_link; CREATE TABLE obv_link.schema_migrations (version integer PRIMARY KEY, ' +
            `description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now()); INSERT INTO obv_link.schema_migrations VALUES (${SCHEMA_VERSION + 1}, 'from the future')`,
        );
        const newer = await doctor({ OBV_DATABASE_URL: primary.url, OBV_DATA_DIR: undefined });
        assert.deepEqual(
          failed(newer.report).map((each) => each.name),
          ['PostgreSQL schema'],
        );
        assert.match(check(newer.report, 'PostgreSQL schema').detail, /migrated by a newer obv-link/);

        const nowhere = `postgres://postgres@127.0.0.1:${await freePort()}/postgres`;
        const unreachable = await doctor({ OBV_DATABASE_URL: nowhere, OBV_DATA_DIR: undefined });
        assert.deepEqual(
          failed(unreachable.report).map((each) => each.name),
          ['PostgreSQL'],
        );
        assert.match(check(unreachable.report, 'PostgreSQL').detail, /could not be reached: .*ECONNREFUSED/);
        assert.match(check(unreachable.report, 'PostgreSQL').fix ?? '', /OBV_DATABASE_URL/);
      } finally {
        await standby.close();
        await volatile.close();
        await primary.close();
      }
    },
  );
});
