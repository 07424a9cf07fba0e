// A full flow with every response body, WebSocket message and log line kept, then scanned: no client
// secret, bearer token, Basic credentials, webhook secret or merchant API key anywhere; the accountToken
// only in its own session's result (GET and WebSocket) — never in a log line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import { SANDBOX_CLIENT, startProxy, startProxyPair, TEST_MERCHANT_API_KEY } from '../../helpers/proxy-harness.ts';
import { connectRelay } from '../../helpers/relay-client.ts';
import { postNotification, SANDBOX_WEBHOOK_SECRET, successPayload } from '../../helpers/webhooks.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

test('leaks no credential into any response or log line during a full flow', async (t) => {
  const pair = await startProxyPair();
  t.after(() => pair.close());
  const broken = await startProxy({
    providerUrl: pair.provider.url,
    proxy: { clientSecret: 'sandbox_secret_but_wrong' },
  });
  t.after(() => broken.close());
  const wsMessages: { sessionId: string; text: string }[] = [];

  // A successful verification, watched over the WebSocket.
  const { sessionId, consumerUrl } = await pair.startVerification(undefined, { 'idempotency-key': 'secret-scan-1' });
  const client = await connectRelay(pair.wsUrl, { origin: pair.origin });
  client.send({ type: 'subscribe', sessionId });
  await completeConsumerStep(consumerUrl, 'good');
  const result = await client.next((message) => message.type === 'result');
  await client.closed;
  for (const message of client.messages) wsMessages.push({ sessionId, text: JSON.stringify(message) });
  const linkRef = (result.outcome as { linkRef: string }).linkRef;
  const accountToken = [...pair.provider.state.accounts.keys()][0]!;
  assert.ok(accountToken);
  await fetch(await pair.returnUrl(sessionId));
  await lookupSession(pair.baseUrl, sessionId);

  // A second session that fails, a token revoked mid-way, a forged notification, a transaction.
  for (const token of pair.provider.state.tokens.keys()) pair.provider.revokeToken(token);
  const other = await pair.startVerification();
  await completeConsumerStep(other.consumerUrl, 'notVerified');
  await pair.provider.notificationsSettled();
  await lookupSession(pair.baseUrl, other.sessionId);
  await postNotification(await pair.notificationUrl(other.sessionId), successPayload(), {
    secret: 'whsec_Zm9yZ2VkLXNlY3JldC1mb3JnZWQtc2VjcmV0',
  });
  const transaction = await fetch(`${pair.baseUrl}/transactions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
    body: JSON.stringify({
      linkRef,
      merchantUserId: 'user-42',
      merchantTransactionId: 'order-1001',
      amount: '49.99',
      currency: 'USD',
    }),
  });
  assert.equal(transaction.status, 201);
  await fetch(`${pair.baseUrl}/transactions`, { method: 'POST', headers: { authorization: 'Bearer nope' } });
  // Credentials rejected: the error path logs the operator message.
  await broken.startVerification().catch(() => undefined);

  const bearerTokens = [...pair.provider.state.tokens.keys()];
  assert.ok(bearerTokens.length >= 2, 'a refresh happened');
  const forbidden = [
    SANDBOX_CLIENT.clientSecret,
    'sandbox_secret_but_wrong',
    Buffer.from(`${SANDBOX_CLIENT.clientId}:${SANDBOX_CLIENT.clientSecret}`).toString('base64'),
    SANDBOX_WEBHOOK_SECRET,
    SANDBOX_WEBHOOK_SECRET.slice('whsec_'.length),
    'sandbox-webhook-secret-obv-link',
    TEST_MERCHANT_API_KEY,
    ...bearerTokens,
  ];
  const logLines = [...pair.logs.lines, ...broken.logs.lines];
  const responses = [...pair.responses, ...broken.responses];
  assert.ok(logLines.length >= 8, `the scan saw the logs (${logLines.length})`);
  assert.ok(responses.length >= 10, `the scan saw the responses (${responses.length})`);
  assert.ok(logLines.some((line) => line.includes('OBV_CLIENT_ID/OBV_CLIENT_SECRET were rejected')));

  for (const secret of forbidden) {
    for (const line of logLines) assert.ok(!line.includes(secret), `log line leaks ${secret.slice(0, 6)}…: ${line}`);
    for (const response of responses) {
      assert.ok(
        !response.body.includes(secret),
        `response to ${response.method} ${response.path} leaks ${secret.slice(0, 6)}…`,
      );
    }
    for (const message of wsMessages) assert.ok(!message.text.includes(secret), 'a WebSocket message leaks a secret');
  }

  for (const line of logLines) assert.ok(!line.includes(accountToken), `log line leaks the accountToken: ${line}`);
  for (const line of logLines) assert.ok(!line.includes(linkRef), `log line carries a whole link reference: ${line}`);
  // The browser-facing routes and the WebSocket never carry the token; the page got the reference instead.
  assert.deepEqual(
    responses.filter((response) => response.body.includes(accountToken)).map((r) => `${r.method} ${r.path}`),
    [],
  );
  assert.ok(responses.some((response) => response.path === '/obv/sessions/lookup' && response.body.includes(linkRef)));
  for (const message of wsMessages)
    assert.ok(!message.text.includes(accountToken), 'a WebSocket message carries the accountToken');
  assert.ok(wsMessages.some((message) => message.text.includes(linkRef)));
  assert.ok(wsMessages.every((message) => message.sessionId === sessionId));
});

test('makes every harness-started proxy fail its test when a secret reaches a log line or a response', async () => {
  const pair = await startProxyPair();
  // Deliberately leak: a message text is not covered by pino's key-based redaction.
  pair.logs.logger.info(`debugging with ${SANDBOX_CLIENT.clientSecret}`);
  await assert.rejects(pair.close(), /secret leak scan failed \(1\):\n {2}sandbo… in log: /);

  const leaky = await startProxyPair();
  const { sessionId } = await leaky.startVerification();
  const bearer = [...leaky.provider.state.tokens.keys()][0]!;
  leaky.logs.logger.info({ sessionId }, `token ${bearer}`);
  await assert.rejects(leaky.close(), /secret leak scan failed/);
});

test('fails the harness scan when an accountToken the proxy answered with was also logged', async () => {
  const pair = await startProxyPair();
  const { sessionId } = await pair.startVerification();
  await postNotification(await pair.notificationUrl(sessionId), successPayload('acct-must-not-be-logged'));
  const { outcome } = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as { outcome: { linkRef: string } };
  // Only the merchant server's API-key route answers with a token.
  await fetch(`${pair.baseUrl}/links/${outcome.linkRef}`, {
    headers: { authorization: `Bearer ${TEST_MERCHANT_API_KEY}` },
  });
  pair.logs.logger.info('outcome acct-must-not-be-logged');
  await assert.rejects(pair.close(), /secret leak scan failed \(1\):\n {2}acct-m… in log: /);
});

test('fails the harness scan when a session id the proxy answered with was logged whole', async () => {
  const pair = await startProxyPair();
  const { sessionId } = await pair.startVerification();
  pair.logs.logger.info(`looking at ${sessionId}`);
  await assert.rejects(
    pair.close(),
    new RegExp(`secret leak scan failed \\(1\\):\\n {2}${sessionId.slice(0, 6)}… in log: `),
  );
});
