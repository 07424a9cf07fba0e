// The demo shop's hardening headers: its CSP lets the page open sockets to its own origin only (not
// `ws: wss:`, any host), checked on the wire and in Chromium, and every answer is nosniff.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import type { RunningDemo } from '../../demo/start-demo.ts';
import { launchChromium, startTestDemo, STEP_TIMEOUT_MS, TEST_TIMEOUT_MS } from './harness.ts';

describe('demo security headers', { timeout: TEST_TIMEOUT_MS * 2 }, () => {
  let demo: RunningDemo;
  let browser: Browser;
  before(async () => {
    demo = await startTestDemo();
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await demo?.close();
  });

  /** The page's headers when asked for under `host` (node:http: fetch does not let a test set Host). */
  const policyFor = (host?: string) =>
    new Promise<{ csp: string; nosniff: unknown }>((resolve, reject) => {
      const request = http.get(demo.url, host ? { headers: { host } } : {}, (response) => {
        response.resume();
        resolve({
          csp: String(response.headers['content-security-policy'] ?? ''),
          nosniff: response.headers['x-content-type-options'],
        });
      });
      request.on('error', reject);
    });

  it("names the page's own WebSocket origin in connect-src, for each origin the shop is served under, and nothing else", async () => {
    const { port } = new URL(demo.url);
    const own = await policyFor();
    assert.match(own.csp, new RegExp(`connect-src 'self' ws://127\\.0\\.0\\.1:${port};`));
    assert.doesNotMatch(own.csp, / ws: | wss: |ws:;|wss:;/);
    assert.equal(own.nosniff, 'nosniff');
    assert.match((await policyFor(`localhost:${port}`)).csp, new RegExp(`connect-src 'self' ws://localhost:${port};`));
    assert.match((await policyFor('evil.example')).csp, /connect-src 'self';/);
  });

  it('lets the checkout open a socket to its own proxy and refuses one to another host (Chromium)', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(demo.url, { timeout: STEP_TIMEOUT_MS });
      // A string, not a function: the test runner's transpiler would add helpers the page does not have.
      const result = (await page.evaluate(`(async () => {
        const blocked = [];
        document.addEventListener('securitypolicyviolation', (event) => blocked.push(event.blockedURI));
        const opens = (url) => new Promise((resolve) => {
          try {
            const socket = new WebSocket(url);
            socket.onopen = () => { socket.close(); resolve('open'); };
            socket.onerror = () => resolve('error');
          } catch (error) {
            resolve('thrown: ' + error.name);
          }
        });
        const own = await opens('ws://' + location.host + '/obv/ws');
        const other = await opens('ws://127.0.0.2:9/elsewhere');
        await new Promise((resolve) => setTimeout(resolve, 100));
        return { own, other, blocked };
      })()`)) as { own: string; other: string; blocked: string[] };
      assert.equal(result.own, 'open');
      assert.notEqual(result.other, 'open');
      assert.ok(
        result.blocked.some((uri) => uri.startsWith('ws://127.0.0.2')),
        `a CSP violation for the other host: ${JSON.stringify(result)}`,
      );
    } finally {
      await page.close();
    }
  });
});
