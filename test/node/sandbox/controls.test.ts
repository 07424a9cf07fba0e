// The sandbox controls' HTTP routes (POST /sandbox/controls/…, GET /sandbox/controls) and the provider
// object's `controls`: who may turn them, how a bad request is refused, and what each does at the sandbox.
// Their effects through the proxy: test/node/proxy/sandbox-controls.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RunningProvider } from '../../../sandbox/index.ts';
import {
  TRANSACTION_PATH,
  accessToken,
  basicAuth,
  postJson,
  startTestProvider,
  startVerification,
  startWebhookReceiver,
  submitConsumerForm,
  verificationBody,
} from './helpers.ts';

const SANDBOX = basicAuth('sandbox_client', 'sandbox_secret');

function control(
  provider: RunningProvider,
  name: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${provider.url}/sandbox/controls${name ? `/${name}` : ''}`, {
    method: 'POST',
    headers: {
      authorization: SANDBOX,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
}

interface Problem {
  status: number;
  detail: string;
  errors?: { path: string; message: string }[];
}

async function linkAs(
  provider: RunningProvider,
  receiver: { received: Array<{ body: string }> },
  username: string,
): Promise<string> {
  const { consumerUrl } = await startVerification(provider);
  assert.equal((await submitConsumerForm(consumerUrl, { username, password: 'pass_good' })).status, 303);
  await provider.notificationsSettled();
  return (JSON.parse(receiver.received.at(-1)?.body ?? '{}') as { account: { accountToken: string } }).account
    .accountToken;
}

describe('sandbox controls over HTTP', () => {
  test("want an active sandbox client's credentials: none, a wrong secret or a revoked client get 401 with a Basic challenge, and nothing changes", async (t) => {
    const provider = await startTestProvider(t);
    for (const authorization of [
      undefined,
      basicAuth('sandbox_client', 'wrong'),
      basicAuth('revoked_client', 'revoked_secret'),
      basicAuth('nobody', 'x'),
      'Bearer abc',
    ]) {
      const response = await fetch(`${provider.url}/sandbox/controls/fail-next`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
        body: JSON.stringify({ errorCode: 'ACCOUNT_LOCKED' }),
      });
      assert.equal(response.status, 401, String(authorization));
      assert.match(response.headers.get('www-authenticate') ?? '', /^Basic realm="obv-sandbox"/);
      assert.match(response.headers.get('content-type') ?? '', /application\/problem\+json/);
    }
    assert.equal(provider.faults.verificationFailures.count, 0);
    assert.equal((await fetch(`${provider.url}/sandbox/controls`)).status, 401);
    // No CORS grant: a page elsewhere cannot send the Authorization header (its preflight gets no Access-Control-Allow-*).
    const preflight = await fetch(`${provider.url}/sandbox/controls/reset`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://evil.example',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization',
      },
    });
    assert.equal(preflight.headers.get('access-control-allow-origin'), null);
  });

  test('refuse a bad body with a 400 problem naming each field, a non-JSON body with 415, and another method with 405', async (t) => {
    const provider = await startTestProvider(t);
    const cases: [string, unknown, string[]][] = [
      ['fail-next', {}, ['errorCode']],
      ['fail-next', { errorCode: 'locked', count: 0 }, ['count', 'errorCode']],
      ['delay', { endpoint: 'token', ms: -1 }, ['endpoint', 'ms']],
      ['delay', { endpoint: 'transaction', ms: 600_001 }, ['ms']],
      ['timeout', { endpoint: 'verification', count: 1.5 }, ['count']],
      ['notify-late', { ms: 0 }, ['ms']],
      ['notify-twice', { count: 'two' }, ['count']],
      ['stale', { consumer: '', extra: true }, ['(body)', 'consumer']],
      ['reset', { all: true }, ['(body)']],
    ];
    for (const [name, body, fields] of cases) {
      const response = await control(provider, name, body);
      assert.equal(response.status, 400, `${name} ${JSON.stringify(body)}`);
      const problem = (await response.json()) as Problem;
      assert.deepEqual(problem.errors?.map((error) => error.path).sort(), fields, `${name} ${JSON.stringify(problem)}`);
    }
    assert.equal(
      (
        await control(provider, 'fail-next', 'errorCode=ACCOUNT_LOCKED', {
          'content-type': 'application/x-www-form-urlencoded',
        })
      ).status,
      415,
    );
    assert.equal((await control(provider, 'fail-next', '{"errorCode":', {})).status, 400);
    assert.equal(
      (await fetch(`${provider.url}/sandbox/controls/reset`, { headers: { authorization: SANDBOX } })).status,
      405,
    );
    assert.equal((await control(provider, 'no-such')).status, 404);
    assert.deepEqual(provider.controls.status(), provider.controls.reset(), 'nothing was set');
  });

  test("answer with the status; GET /sandbox/controls reads it; reset turns everything off, options' faults included", async (t) => {
    const provider = await startTestProvider(t, { faults: { dropNotifications: 3, transactionDelayMs: 50 } });
    await control(provider, 'fail-next', { errorCode: 'ACCOUNT_LOCKED', count: 2 });
    await control(provider, 'delay', { endpoint: 'verification', ms: 25 });
    await control(provider, 'timeout', { endpoint: 'transaction', count: 3 });
    await control(provider, 'notify-late', { ms: 1500 });
    const last = (await (await control(provider, 'notify-twice', undefined)).json()) as { controls: unknown };
    const expected = {
      staleAccounts: 0,
      failNext: { count: 2, errorCode: 'ACCOUNT_LOCKED', errorMessage: 'This account is locked. Contact your bank.' },
      delayMs: { verification: 25, transaction: 50 },
      timeouts: { verification: 0, transaction: 3 },
      notifyLate: { count: 1, ms: 1500 },
      notifyTwice: 1,
    };
    assert.deepEqual(last.controls, expected);
    const read = await fetch(`${provider.url}/sandbox/controls`, { headers: { authorization: SANDBOX } });
    assert.equal(read.headers.get('cache-control'), 'no-store');
    assert.deepEqual(((await read.json()) as { controls: unknown }).controls, expected);
    const reset = (await (await control(provider, 'reset')).json()) as { controls: unknown };
    assert.deepEqual(reset.controls, {
      staleAccounts: 0,
      failNext: null,
      delayMs: { verification: 0, transaction: 0 },
      timeouts: { verification: 0, transaction: 0 },
      notifyLate: { count: 0, ms: 0 },
      notifyTwice: 0,
    });
    assert.equal(provider.faults.dropNotifications, 0);
  });

  test("stale marks the asking client's accounts by test consumer or accountToken; one that matches nothing is a 422 naming the field; reset clears the marks", async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    const good = await linkAs(provider, receiver, 'user_good');
    const savings = await linkAs(provider, receiver, 'user_savings');
    const unknown = await control(provider, 'stale', { consumer: 'user_nobody' });
    assert.equal(unknown.status, 422);
    assert.deepEqual(
      ((await unknown.json()) as Problem).errors?.map((error) => error.path),
      ['consumer'],
    );
    const byToken = await control(provider, 'stale', { accountToken: 'acct_unknown' });
    assert.deepEqual(
      ((await byToken.json()) as Problem).errors?.map((error) => error.path),
      ['accountToken'],
    );

    const marked = (await (await control(provider, 'stale', { consumer: 'user_savings' })).json()) as {
      marked: number;
      controls: { staleAccounts: number };
    };
    assert.deepEqual([marked.marked, marked.controls.staleAccounts], [1, 1]);
    assert.equal(provider.state.accounts.get(savings)?.stale, true);
    assert.notEqual(provider.state.accounts.get(good)?.stale, true);

    const pay = async (accountToken: string) =>
      (
        await postJson(
          `${provider.url}${TRANSACTION_PATH}`,
          await accessToken(provider),
          {
            accountToken,
            merchant: { merchantId: 'm', merchantTransactionId: `o-${Math.random()}` },
          },
          { 'x-pgw-app-id': 'a', 'x-pgw-client-id': 'sandbox_client' },
        )
      ).status;
    assert.deepEqual([await pay(savings), await pay(good)], [422, 201]);
    assert.equal(
      ((await (await control(provider, 'stale', { accountToken: good })).json()) as { marked: number }).marked,
      1,
    );
    assert.equal(
      ((await (await control(provider, 'reset')).json()) as { controls: { staleAccounts: number } }).controls
        .staleAccounts,
      0,
    );
    assert.deepEqual([await pay(savings), await pay(good)], [201, 201]);
    assert.equal(
      ((await (await control(provider, 'stale', {})).json()) as { marked: number }).marked,
      2,
      'no filter: every account',
    );
  });

  test('a time-out holds the request open without recording it, for `count` requests; reset ends the held ones', async (t) => {
    const provider = await startTestProvider(t);
    await control(provider, 'timeout', { endpoint: 'verification', count: 1 });
    const token = await accessToken(provider);
    const held = postJson(`${provider.url}/exp/ext/mint/ooes/v1/obv`, token, verificationBody()).then(
      (response) => response.status,
      (error: unknown) => `ended: ${String(error)}`,
    );
    // The request is in: nothing answers it until reset.
    for (let i = 0; i < 100 && provider.faults.endpointTimeouts.verification > 0; i++)
      await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(provider.faults.endpointTimeouts.verification, 0, 'the time-out was taken by the request');
    assert.equal(provider.state.verifications.size, 0);
    await control(provider, 'reset');
    assert.match(String(await held), /^ended/);
    assert.equal(
      (await postJson(`${provider.url}/exp/ext/mint/ooes/v1/obv`, token, verificationBody())).status,
      200,
      'the next request is answered',
    );
  });

  test("fail-next: the bank's page ends the verification with the chosen code (its own message, or the one given), count times", async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    await control(provider, 'fail-next', { errorCode: 'CONSUMER_CANCELLED' });
    await control(provider, 'fail-next', { errorCode: 'RISK_DECLINED', errorMessage: 'Declined by risk.', count: 2 });
    const outcomes = [];
    for (let i = 0; i < 3; i++) {
      const { consumerUrl } = await startVerification(provider);
      await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'pass_good' });
      await provider.notificationsSettled();
      const body = JSON.parse(receiver.received.at(-1)?.body ?? '{}') as {
        verificationStatus: string;
        errorCode?: string;
        errorMessage?: string;
      };
      outcomes.push([body.verificationStatus, body.errorCode, body.errorMessage]);
    }
    assert.deepEqual(
      outcomes,
      [
        ['FAILURE', 'RISK_DECLINED', 'Declined by risk.'],
        ['FAILURE', 'RISK_DECLINED', 'Declined by risk.'],
        ['SUCCESS', undefined, undefined],
      ],
      'the last control set wins; it fires count times',
    );
  });
});

describe('provider.controls (the same controls in code)', () => {
  test('each validates its input and throws a TypeError naming the field; valid calls change the live faults', async (t) => {
    const provider = await startTestProvider(t);
    assert.throws(() => provider.controls.failNext({ errorCode: 'nope' }), /sandbox control failNext: errorCode/);
    assert.throws(() => provider.controls.delay({ endpoint: 'token' as never, ms: 5 }), /endpoint/);
    assert.throws(() => provider.controls.notifyLate({ ms: -5 }), /ms/);
    assert.throws(() => provider.controls.markStale({ consumer: 7 as never }), TypeError);
    assert.equal(provider.controls.timeout({ endpoint: 'transaction', count: 2 }).timeouts.transaction, 2);
    assert.equal(provider.controls.delay({ endpoint: 'verification', ms: 10 }).delayMs.verification, 10);
    assert.equal(provider.controls.notifyTwice().notifyTwice, 1);
    assert.deepEqual(provider.controls.notifyLate({ ms: 20, count: 3 }).notifyLate, { count: 3, ms: 20 });
    assert.equal(
      provider.controls.failNext({ errorCode: 'ACCOUNT_NOT_VERIFIED' }).failNext?.errorMessage,
      'The bank could not verify this account.',
    );
    assert.equal(provider.controls.markStale({ consumer: 'user_good' }), 0);
    assert.equal(provider.controls.reset().failNext, null);
    assert.equal(provider.faults.transactionDelayMs + provider.faults.endpointTimeouts.transaction, 0);
  });
});
