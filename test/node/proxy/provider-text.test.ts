// Provider text never reaches the browser: a provider that echoes the accountToken it was sent in its
// field errors or failure messages puts it in no answer to the page, and in no log line; the page gets
// the proxy's own words, the log the provider's, scrubbed.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test, type TestContext } from 'node:test';
import express from 'express';
import { TOKEN_PATH } from '../../../proxy/upstream/token-manager.ts';
import { VERIFICATION_PATH } from '../../../proxy/upstream/verification-client.ts';
import { scrubProviderText, withoutSecrets } from '../../../proxy/upstream/provider-text.ts';
import { draftWithPurchase, startProxy, startProxyPair } from '../../helpers/proxy-harness.ts';
import { failurePayload, postNotification } from '../../helpers/webhooks.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

const ECHOED_TOKEN = 'acct_EchoedBack0123456789abcdef';

/** A provider whose endpoint 2 refuses every request, repeating the accountToken it was sent. */
async function echoingProvider(t: TestContext): Promise<string> {
  const app = express();
  app.use(express.json());
  app.post(TOKEN_PATH, (_req, res) => {
    res.json({ access_token: 'bearer-for-the-echoing-provider', expires_in: 3600, token_type: 'Bearer' });
  });
  app.post(VERIFICATION_PATH, (req, res) => {
    const sent = String((req.body as { accountToken?: unknown }).accountToken ?? '');
    res
      .status(422)
      .type('application/problem+json')
      .json({
        title: `Refused ${sent}`,
        detail: `The account ${sent} cannot be verified again`,
        errors: [
          { path: 'accountToken', message: `unknown token ${sent}` },
          { path: 'transaction.amount', message: `amount not allowed for ${sent}` },
          { path: sent, message: 'unexpected field' },
        ],
      });
  });
  const server = http.createServer(app).listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('provider text', () => {
  test("a refused re-verification answers the page in the proxy's words; the provider's errors are logged without the token", async (t) => {
    const providerUrl = await echoingProvider(t);
    const proxy = await startProxy({
      providerUrl,
      proxy: { enrichStart: (_req, draft) => ({ ...draftWithPurchase(draft), accountToken: ECHOED_TOKEN }) },
    });
    t.after(() => proxy.close());
    const response = await fetch(`${proxy.baseUrl}/verifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: proxy.origin },
      body: JSON.stringify({ language: 'en' }),
    });
    const text = await response.text();
    assert.equal(response.status, 422);
    assert.ok(!text.includes(ECHOED_TOKEN), text);
    assert.ok(!/unknown token|not allowed|cannot be verified/.test(text), `no provider words: ${text}`);
    const problem = JSON.parse(text) as { type: string; errors: unknown };
    assert.equal(problem.type, 'urn:obv-link:problem:upstream-rejected');
    assert.deepEqual(problem.errors, [
      { path: 'accountToken', message: 'was refused by the verification service' },
      { path: 'transaction.amount', message: 'was refused by the verification service' },
    ]);
    const logged = proxy.logs.lines.join('\n');
    assert.ok(!logged.includes(ECHOED_TOKEN), 'the token is in no log line');
    const [line] = proxy.logs.find('the provider answered HTTP 422');
    assert.deepEqual((line as { providerErrors?: unknown }).providerErrors, [
      { path: 'accountToken', message: 'unknown token [redacted]' },
      { path: 'transaction.amount', message: 'amount not allowed for [redacted]' },
      { path: '[redacted]', message: 'unexpected field' },
    ]);
  });

  test("a failure notification's message reaches neither the page nor the socket nor the log with the token", async (t) => {
    const pair = await startProxyPair();
    t.after(() => pair.close());
    const { sessionId } = await pair.startVerification();
    const url = await pair.notificationUrl(sessionId);
    const echoed = failurePayload('ACCOUNT_NOT_VERIFIED', `Account ${ECHOED_TOKEN} could not be verified`);
    assert.equal((await postNotification(url, echoed)).status, 200);
    const session = await (await lookupSession(pair.baseUrl, sessionId)).text();
    assert.ok(!session.includes(ECHOED_TOKEN) && !session.includes('could not be verified'), session);
    assert.match(session, /"code":"ACCOUNT_NOT_VERIFIED"/);
    assert.ok(!pair.logs.lines.join('\n').includes(ECHOED_TOKEN));
    const [stored] = pair.logs.find('verification outcome stored and published');
    assert.deepEqual((stored as { failure?: unknown }).failure, {
      code: 'ACCOUNT_NOT_VERIFIED',
      message: 'Account [redacted] could not be verified',
    });
  });

  test('scrubbing keeps words, field names and amounts and removes token-shaped runs and known secrets', () => {
    assert.equal(
      scrubProviderText('amount 49.99 is above the limit for merchant.merchantUserId'),
      'amount 49.99 is above the limit for merchant.merchantUserId',
    );
    assert.equal(scrubProviderText('token tok_a1b2c3d4e5f6g7h8 refused'), 'token [redacted] refused');
    assert.equal(scrubProviderText('secret plainwordsecret', ['plainwordsecret']), 'secret [redacted]');
    assert.equal(scrubProviderText('x'.repeat(500)).length, 201);
  });

  test('a token echoed in part or encoded is scrubbed: any 8+ characters of it, and its base64, base64url, hex and URL-encoded forms', () => {
    const token = 'acct_EchoedBack0123456789abcdef?x=1&y/z+';
    const forms = (value: string) => [
      value,
      encodeURIComponent(value),
      Buffer.from(value).toString('base64'),
      Buffer.from(value).toString('base64url'),
      Buffer.from(value).toString('hex'),
      Buffer.from(value).toString('hex').toUpperCase(),
    ];
    const echoes = [
      token.slice(0, 12),
      token.slice(5, 13),
      token.slice(9, 30),
      token.slice(-10),
      ...forms(token).slice(1),
      ...[token.slice(0, 12), token.slice(1, 14), token.slice(2, 20), token.slice(20)].flatMap((part) =>
        forms(part).slice(1),
      ),
    ];
    for (const echo of echoes) {
      const body = {
        message: `The account ${echo} was refused`,
        detail: { reason: `see ${echo}.` },
        code: 'DECLINED',
        amount: '42.50',
      };
      const scrubbed = JSON.stringify(withoutSecrets(body, [token]));
      assert.ok(!scrubbed.includes(echo), `${echo} → ${scrubbed}`);
      assert.match(scrubbed, /"message":"The account \[redacted\][^"]{0,3} was refused"/, scrubbed);
      assert.match(scrubbed, /"code":"DECLINED","amount":"42.50"/);
      assert.equal(scrubProviderText(`refused ${echo} here`, [token]).includes(echo), false, echo);
    }
    // Words that merely share a few characters with the token stay.
    assert.deepEqual(withoutSecrets({ message: 'acct_ is a prefix; Echoed is a word' }, [token]), {
      message: 'acct_ is a prefix; Echoed is a word',
    });
  });

  test('an echo in another case is an echo (issue 39 §5): the whole token, a part of it, or an encoding, upper- or lower-cased', () => {
    const token = 'acct_EchoedBack0123456789abcdef';
    const echoes = [
      token.toUpperCase(),
      token.toLowerCase(),
      token.slice(3, 20).toUpperCase(),
      `${token.slice(0, 10)}${token.slice(10).toUpperCase()}`,
      Buffer.from(token).toString('base64').toUpperCase(),
      encodeURIComponent(token).toUpperCase(),
    ];
    for (const echo of echoes) {
      const body = {
        message: `Account ${echo} refused`,
        fields: [{ path: 'accountToken', message: `${echo} is not valid` }],
        code: 'DECLINED',
      };
      const scrubbed = JSON.stringify(withoutSecrets(body, [token]));
      assert.ok(!scrubbed.toLowerCase().includes(echo.toLowerCase().slice(0, 12)), `${echo} → ${scrubbed}`);
      assert.match(scrubbed, /"message":"Account \[redacted\][^"]{0,3} refused"/, scrubbed);
      assert.match(scrubbed, /"path":"accountToken"/, 'field names stay');
      assert.equal(
        scrubProviderText(`refused ${echo}`, [token]).toLowerCase().includes(echo.toLowerCase().slice(0, 12)),
        false,
        echo,
      );
    }
    // The rest of the text keeps its own case.
    assert.deepEqual(withoutSecrets({ message: `Declined: ${token.toUpperCase()} (Insufficient Funds)` }, [token]), {
      message: 'Declined: [redacted] (Insufficient Funds)',
    });
  });

  test('a token nested deeper than the walk goes is not passed on either', () => {
    const token = 'acct_EchoedBack0123456789abcdef';
    let deep: unknown = { note: `account ${token}` };
    for (let level = 0; level < 12; level++) deep = { level, inner: deep };
    const scrubbed = JSON.stringify(withoutSecrets({ answer: deep, status: 'DECLINED' }, [token]));
    assert.ok(!scrubbed.includes(token.slice(0, 12)), scrubbed);
    assert.match(scrubbed, /"status":"DECLINED"/);
    const plain = { a: { b: { c: { d: { e: { f: { g: { h: { i: { j: { k: 'nothing secret' } } } } } } } } } } };
    assert.deepEqual(withoutSecrets(plain, [token]), plain);
  });
});
