// The proxy guide's "Mount it in an existing Express app" snippet (docs/PROXY.md), run as written: it is cut out of the
// guide, its import paths pointed at this checkout, its fixed port swapped for a free one, and a
// stand-in for the merchant's session middleware put in front. A full verification then runs through it.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import type http from 'node:http';
import { startProvider } from '../../../sandbox/index.ts';
import type { ObvProxy } from '../../../proxy/index.ts';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { SANDBOX_CLIENT } from '../../helpers/proxy-harness.ts';
import { connectRelay } from '../../helpers/relay-client.ts';
import { SANDBOX_WEBHOOK_SECRET } from '../../helpers/webhooks.ts';
import { freePort } from '../../helpers/free-port.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const SESSION_USER = {
  id: 'readme-user-7',
  firstName: 'Katherine',
  lastName: 'Johnson',
  email: 'katherine@example.com',
};
const SESSION_CART = { orderId: 'order-readme', total: '49.99' };

/** The first ```ts block under the proxy guide's heading `heading`. */
function guideSnippet(heading: string): string {
  const readme = readFileSync(path.join(ROOT, 'docs/PROXY.md'), 'utf8');
  const start = readme.indexOf(heading);
  assert.ok(start >= 0, `docs/PROXY.md has a "${heading}" section`);
  const code = /```ts\n([\s\S]*?)```/.exec(readme.slice(start))?.[1];
  assert.ok(code, `the "${heading}" section has a ts code block`);
  return code;
}

/** Replaces `search` once, failing loudly when the guide no longer contains it. */
function replaceOnce(code: string, search: string, replacement: string): string {
  assert.ok(code.includes(search), `the guide's snippet contains ${JSON.stringify(search)}`);
  return code.replace(search, replacement);
}

test("the proxy guide's mounting snippet serves a whole verification in a fresh Express app", async (t) => {
  const provider = await startProvider({ port: 0, notificationRetryDelaysMs: [50, 100, 200] });
  t.after(() => provider.close());
  const port = await freePort();

  let code = guideSnippet('## Mount it in an existing Express app');
  code = replaceOnce(code, "from 'express'", `from ${JSON.stringify(import.meta.resolve('express'))}`);
  code = replaceOnce(
    code,
    "from 'obv-link/proxy'",
    `from ${JSON.stringify(pathToFileURL(path.join(ROOT, 'proxy/index.ts')).href)}`,
  );
  code = replaceOnce(code, 'app.listen(3000)', `app.listen(${port}, '127.0.0.1')`);
  // What express-session (or the merchant's own auth) would have put on the request.
  code = replaceOnce(
    code,
    'const app = express();',
    `const app = express();\napp.use((req, _res, next) => { req.session = { user: ${JSON.stringify(SESSION_USER)}, cart: ${JSON.stringify(SESSION_CART)} }; next(); });`,
  );
  code += '\nexport { app, proxy, server };\n';

  const env = {
    OBV_BASE_URL: provider.url,
    OBV_CLIENT_ID: SANDBOX_CLIENT.clientId,
    OBV_CLIENT_SECRET: SANDBOX_CLIENT.clientSecret,
    OBV_MERCHANT_ID: 'merchant-readme',
    OBV_PUBLIC_URL: `http://127.0.0.1:${port}`,
    OBV_WEBHOOK_SECRET: SANDBOX_WEBHOOK_SECRET,
    OBV_SANDBOX: 'true',
    OBV_LOG_LEVEL: 'silent',
    // The default storage (SQLite) in a directory of this test's own, not the checkout's ./obv-link-data.
    OBV_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'obv-readme-data-')),
  };
  t.after(() => rmSync(env.OBV_DATA_DIR, { recursive: true, force: true }));
  const savedEnv = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  const sigtermBefore = new Set(process.listeners('SIGTERM'));
  const dir = mkdtempSync(path.join(tmpdir(), 'obv-readme-'));
  const file = path.join(dir, 'merchant-app.ts');
  writeFileSync(file, code);
  let mounted: { proxy: ObvProxy; server: http.Server };
  try {
    mounted = (await import(pathToFileURL(file).href)) as typeof mounted;
  } finally {
    for (const [key, value] of Object.entries(savedEnv)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    rmSync(dir, { recursive: true, force: true });
  }
  const { proxy, server } = mounted;
  t.after(async () => {
    // The snippet's own SIGTERM handler: ours to remove, nobody else's.
    for (const listener of process.listeners('SIGTERM'))
      if (!sigtermBefore.has(listener)) process.off('SIGTERM', listener);
    await proxy.close();
    const closed = new Promise((resolve) => server.close(resolve));
    server.closeAllConnections();
    await closed;
  });
  if (!server.listening) await once(server, 'listening');
  const origin = `http://127.0.0.1:${port}`;
  assert.equal(proxy.mountPath, '/obv');

  // The page (the element without a link token) sends only its language: the snippet's enrichStart names
  // the purchase from the session.
  const started = await fetch(`${origin}/obv/verifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ language: 'en' }),
  });
  assert.equal(started.status, 201, await started.clone().text());
  const { sessionId, consumerUrl } = (await started.json()) as { sessionId: string; consumerUrl: string };
  const upstream = [...provider.state.verifications.values()].find(
    (v) => v.request.merchant.merchantTransactionId === 'order-readme',
  );
  assert.deepEqual(upstream?.request.consumer, {
    firstName: SESSION_USER.firstName,
    lastName: SESSION_USER.lastName,
    email: SESSION_USER.email,
  });
  assert.equal(upstream?.request.merchant.merchantUserId, SESSION_USER.id);
  assert.equal(upstream?.request.transaction.amount, SESSION_CART.total);
  assert.match(upstream?.request.merchant.returnURL ?? '', new RegExp(`^${origin}/obv/return/[A-Za-z0-9_-]{22}$`));
  assert.ok(!upstream?.request.merchant.returnURL?.includes(sessionId), 'the session id never goes upstream');

  const client = await connectRelay(`ws://127.0.0.1:${port}/obv/ws`, { origin });
  client.send({ type: 'subscribe', sessionId });
  await client.next((message) => message.type === 'subscribed');
  await completeConsumerStep(consumerUrl, 'good');
  const result = await client.next((message) => message.type === 'result');
  assert.equal((result.outcome as { status: string }).status, 'success');
  assert.equal((await client.closed).code, 1000);
});
