// npm start's servers (proxy/server.ts, in-process) and the CLI itself: slow headers are cut, the
// provider's notifications can have a listener of their own, metrics stay off the public listener, and
// a SIGTERM drains (in-flight requests finish, sockets get 1001) and exits 0 within its bound.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { startProvider } from '../../../sandbox/index.ts';
import { parseProxyConfig } from '../../../proxy/config/schema.ts';
import { startProxyServers, type ProxyServers } from '../../../proxy/server.ts';
import { captureLogs } from '../../helpers/log-capture.ts';
import { draftWithPurchase, sandboxProxyConfig, PURCHASE } from '../../helpers/proxy-harness.ts';
import { connectRelay, subscribedRelay } from '../../helpers/relay-client.ts';

const portOf = (servers: ProxyServers['server']) => (servers.address() as AddressInfo).port;

async function startServers(overrides: Record<string, unknown>, providerUrl = 'http://127.0.0.1:9') {
  const logs = captureLogs('debug');
  const config = parseProxyConfig({
    ...sandboxProxyConfig(providerUrl, 'http://127.0.0.1:1'),
    port: 0,
    host: '127.0.0.1',
    ...overrides,
  });
  const servers = await startProxyServers(config, { logger: logs.logger, defaultMetrics: false });
  return { servers, logs, base: `http://127.0.0.1:${portOf(servers.server)}/obv` };
}

/** A link session's token, made as the merchant's server does. */
async function linkToken(servers: ProxyServers): Promise<string> {
  return (await servers.proxy.createLinkSession(PURCHASE)).linkToken;
}

describe('npm start servers', () => {
  test('cut a connection whose headers never finish after headersTimeout', async (t) => {
    const { servers } = await startServers({ headersTimeoutMs: 300, requestTimeoutMs: 600 });
    t.after(() => servers.shutdown());
    const socket = net.connect(portOf(servers.server), '127.0.0.1');
    await once(socket, 'connect');
    const started = Date.now();
    socket.write('GET /obv/healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ');
    const dripper = setInterval(() => socket.write('a'), 50);
    socket.resume();
    const closed = once(socket, 'close');
    const bound = new Promise((resolve) => setTimeout(() => resolve('still open'), 4_000));
    const result = await Promise.race([closed.then(() => 'closed'), bound]);
    clearInterval(dripper);
    socket.destroy();
    assert.equal(result, 'closed');
    assert.ok(Date.now() - started < 4_000);
  });

  test('serve notifications on their own listener when configured, not on the browser-facing one', async (t) => {
    const { servers, base } = await startServers({ notificationPublicUrl: 'http://127.0.0.1:2', notificationPort: 0 });
    t.after(() => servers.shutdown());
    const notificationBase = `http://127.0.0.1:${portOf(servers.notificationServer!)}/obv`;
    const post = (url: string) =>
      fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    assert.equal((await post(`${base}/notifications/abcdefghijklmnopqrstuv`)).status, 404);
    assert.equal((await post(`${notificationBase}/notifications/abcdefghijklmnopqrstuv`)).status, 401);
    assert.equal(
      (await fetch(`${notificationBase}/verifications`, { method: 'POST' })).status,
      404,
      'only notifications there',
    );
  });

  test('serve metrics only on the metrics listener', async (t) => {
    const { servers, base } = await startServers({ metricsPort: 0 });
    t.after(() => servers.shutdown());
    const metrics = await fetch(`http://127.0.0.1:${portOf(servers.metricsServer!)}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(await metrics.text(), /obv_relay_open_sockets 0/);
    assert.equal((await fetch(`${base}/metrics`)).status, 404);
  });

  test('shut down gracefully: an in-flight start finishes, sockets get 1001 at once, new connections are refused', async (t) => {
    const provider = await startProvider({ port: 0 });
    t.after(() => provider.close());
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let entered: () => void = () => undefined;
    const inHook = new Promise<void>((resolve) => (entered = resolve));
    const logs = captureLogs('debug');
    const config = parseProxyConfig({
      ...sandboxProxyConfig(provider.url, 'http://127.0.0.1:1'),
      port: 0,
      host: '127.0.0.1',
      shutdownTimeoutMs: 5_000,
      drainWindowMs: 0,
    });
    let slow = false;
    const servers = await startProxyServers(config, {
      logger: logs.logger,
      defaultMetrics: false,
      enrichStart: async (_req, draft) => {
        if (slow) {
          entered();
          await gate;
        }
        return draftWithPurchase(draft);
      },
    });
    const origin = `http://127.0.0.1:${portOf(servers.server)}`;
    const base = `${origin}/obv`;
    // No link token: the start waits in the merchant's enrichStart hook.
    const startBody = {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://127.0.0.1:1' },
      body: JSON.stringify({ language: 'en' }),
    };
    const first = (await (await fetch(`${base}/verifications`, startBody)).json()) as { sessionId: string };
    const socket = await subscribedRelay(`${base.replace(/^http/, 'ws')}/ws`, 'http://127.0.0.1:1', first.sessionId);

    slow = true;
    const inFlight = fetch(`${base}/verifications`, startBody);
    await inHook;
    const stopped = servers.shutdown();
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal((await socket.closed).code, 1001);
    await assert.rejects(fetch(`${base}/healthz`), 'no new connections');
    release();
    const finished = await inFlight.catch((error: Error) => {
      throw new Error(`in-flight start failed: ${String((error.cause as Error)?.message ?? error)}`);
    });
    assert.equal(finished.status, 201, 'the in-flight start finished');
    await stopped;
    assert.equal(servers.inFlight, 0);
  });
});

describe('a proxy standing alone that could start nothing', () => {
  test('says so at boot without OBV_MERCHANT_API_KEY (no link sessions), and not with it', async (t) => {
    const bare = await startServers({ merchantApiKey: undefined, pgwAppId: undefined, pgwClientId: undefined });
    t.after(() => bare.servers.shutdown());
    assert.equal(bare.logs.find('no verification can start').length, 1);
    const keyed = await startServers({});
    t.after(() => keyed.servers.shutdown());
    assert.equal(keyed.logs.find('no verification can start').length, 0);
  });
});

describe('the credentials, checked once at boot', () => {
  /** Polls until `check` holds (bounded). */
  async function until(check: () => boolean, what: string): Promise<void> {
    for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.ok(check(), what);
  }

  test('wrong ones: one token request, one log line naming the variables, and /readyz 503 without asking again per probe', async (t) => {
    const provider = await startProvider({ port: 0 });
    t.after(() => provider.close());
    const { servers, logs, base } = await startServers(
      { clientSecret: 'not-the-sandbox-secret', drainWindowMs: 0 },
      provider.url,
    );
    t.after(() => servers.shutdown());
    await until(() => logs.find('credentials refused').length > 0, 'the refusal is logged');
    const [line] = logs.find('credentials refused');
    assert.match(String(line?.msg), /OBV_CLIENT_ID \/ OBV_CLIENT_SECRET \(invalid_client\)/);
    assert.equal(line?.level, 50, 'at error');
    for (let probe = 0; probe < 5; probe++) {
      const ready = await fetch(`${base}/readyz`);
      assert.equal(ready.status, 503);
      assert.deepEqual(await ready.json(), { status: 'unavailable', sessionStore: 'ok', credentials: 'refused' });
    }
    assert.equal(provider.stats.tokenRequests, 1, 'one token request, none per probe');
    assert.equal(
      logs.records().filter((record) => String(record.msg).startsWith('credentials ')).length,
      1,
      'one log line',
    );
    assert.equal((await fetch(`${base}/healthz`)).status, 200, 'alive all the same');
  });

  test('right ones: ready, and the first shopper reuses the token the check obtained', async (t) => {
    const provider = await startProvider({ port: 0 });
    t.after(() => provider.close());
    const { servers, logs, base } = await startServers({ drainWindowMs: 0 }, provider.url);
    t.after(() => servers.shutdown());
    await until(() => logs.find('credentials accepted').length > 0, 'the acceptance is logged');
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', sessionStore: 'ok', credentials: 'accepted' });
    const start = await fetch(`${base}/verifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://127.0.0.1:1' },
      body: JSON.stringify({ linkToken: await linkToken(servers) }),
    });
    assert.equal(start.status, 201);
    assert.equal(provider.stats.tokenRequests, 1);
  });

  test('an unreachable provider leaves the instance ready, saying the credentials are not checked yet', async (t) => {
    const { servers, logs, base } = await startServers({ drainWindowMs: 0, upstreamTimeoutMs: 500 });
    t.after(() => servers.shutdown());
    await until(() => logs.find('credentials not checked').length > 0, 'the failed check is logged');
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready', sessionStore: 'ok', credentials: 'unreachable' });
  });
});

describe('the drain window', () => {
  test('answers /readyz 503 for the window while serving on (health, starts, open sockets), then closes the listener', async (t) => {
    const provider = await startProvider({ port: 0 });
    t.after(() => provider.close());
    const { servers, base } = await startServers({ drainWindowMs: 1_500 }, provider.url);
    t.after(() => servers.shutdown());
    const startBody = {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'http://127.0.0.1:1' },
      body: JSON.stringify({ linkToken: await linkToken(servers) }),
    };
    const first = (await (await fetch(`${base}/verifications`, startBody)).json()) as { sessionId: string };
    const socket = await subscribedRelay(`${base.replace(/^http/, 'ws')}/ws`, 'http://127.0.0.1:1', first.sessionId);
    assert.equal((await fetch(`${base}/readyz`)).status, 200);

    const began = Date.now();
    const stopped = servers.shutdown();
    const ready = await fetch(`${base}/readyz`);
    assert.equal(ready.status, 503, 'not ready as soon as the shutdown begins');
    assert.deepEqual(await ready.json(), { status: 'draining' });
    assert.equal((await fetch(`${base}/healthz`)).status, 200, 'still alive');
    assert.equal(
      (await fetch(`${base}/verifications`, startBody)).status,
      201,
      'a shopper the balancer still sends is served',
    );
    const closedEarly = await Promise.race([
      socket.closed.then(() => true),
      new Promise((resolve) => setTimeout(() => resolve(false), 300)),
    ]);
    assert.equal(closedEarly, false, 'open WebSockets stay open during the window');

    await stopped;
    assert.ok(Date.now() - began >= 1_400, `the listener stayed open for the window (${Date.now() - began} ms)`);
    assert.equal((await socket.closed).code, 1001);
    await assert.rejects(fetch(`${base}/healthz`), 'the listener is closed after the window');
  });
});

describe('npm start (proxy/cli.ts) process', () => {
  function runCli(env: Record<string, string>) {
    const child = spawn(process.execPath, ['--import', 'tsx', 'proxy/cli.ts'], {
      // The CLI's default storage (SQLite) in a directory of this test's own.
      env: { PATH: process.env.PATH ?? '', OBV_DATA_DIR: mkdtempSync(join(tmpdir(), 'obv-cli-')), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.resume();
    return { child, stdout: () => stdout };
  }

  test('binds HOST, and exits 0 soon after SIGTERM with a WebSocket open', async () => {
    const env = {
      ...Object.fromEntries(
        Object.entries(sandboxProxyConfig('http://127.0.0.1:9', 'http://127.0.0.1:1')).flatMap(([key, value]) => {
          const names: Record<string, string> = {
            baseUrl: 'OBV_BASE_URL',
            clientId: 'OBV_CLIENT_ID',
            clientSecret: 'OBV_CLIENT_SECRET',
            publicUrl: 'OBV_PUBLIC_URL',
            webhookSecret: 'OBV_WEBHOOK_SECRET',
            merchantId: 'OBV_MERCHANT_ID',
          };
          return names[key] ? [[names[key], String(value)]] : [];
        }),
      ),
      OBV_SANDBOX: 'true',
      HOST: '127.0.0.1',
      PORT: '0',
      OBV_SHUTDOWN_TIMEOUT: '3s',
      OBV_DRAIN_WINDOW: '0',
    };
    const { child, stdout } = runCli(env);
    try {
      for (let i = 0; i < 200 && !stdout().includes('listening'); i++)
        await new Promise((resolve) => setTimeout(resolve, 50));
      const line = JSON.parse(
        stdout()
          .split('\n')
          .find((l) => l.includes('listening')) ?? '{}',
      ) as { url?: string };
      assert.match(line.url ?? '', /^http:\/\/127\.0\.0\.1:\d+\/obv$/);
      const socket = await connectRelay(`${line.url!.replace(/^http/, 'ws')}/ws`, { origin: 'http://127.0.0.1:1' });
      const started = Date.now();
      child.kill('SIGTERM');
      const [code] = (await once(child, 'exit')) as [number | null];
      assert.equal(code, 0);
      assert.ok(Date.now() - started < 5_000, `exited after ${Date.now() - started} ms`);
      assert.equal((await socket.closed).code, 1001);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});
