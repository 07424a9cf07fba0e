// POST /transactions and GET /links/:linkRef — the merchant server redeems the link reference the page
// holds; the proxy looks the accountToken up itself, and only for the user, order and amount it was
// verified for, once.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test, type TestContext } from 'node:test';
import { completeConsumerStep } from '../../helpers/consumer.ts';
import {
  type LinkSessionInput,
  PURCHASE,
  startProxy,
  startProxyPair,
  TEST_MERCHANT_API_KEY,
  type ProxyPair,
} from '../../helpers/proxy-harness.ts';
import { lookupSession } from '../../helpers/session-requests.ts';

const AUTH = `Bearer ${TEST_MERCHANT_API_KEY}`;

describe('transactions', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair();
  });
  after(() => pair.close());

  /** The order each reference was verified for (an order is paid once, so each test links its own). */
  const orderOf = new Map<string, string>();

  /** Links an account for a new order (or `order`'s) and returns the reference the browser got. */
  async function verifiedLinkRef(order: Partial<LinkSessionInput> = {}): Promise<string> {
    const merchantTransactionId = order.merchantTransactionId ?? `order-${randomUUID()}`;
    const { sessionId, consumerUrl } = await pair.startVerification({ ...order, merchantTransactionId });
    await completeConsumerStep(consumerUrl, 'good');
    await pair.provider.notificationsSettled();
    const session = (await (await lookupSession(pair.baseUrl, sessionId)).json()) as {
      outcome: Record<string, string>;
    };
    assert.equal(session.outcome.accountToken, undefined, "the browser's view of a session carries no accountToken");
    orderOf.set(session.outcome.linkRef!, merchantTransactionId);
    return session.outcome.linkRef!;
  }

  /**
   * A stand-in gateway (endpoint 4) answering with `answer(request body)`, and a second proxy that pays
   * through it, sharing this pair's sessions; both closed after `t`. Returns a Pay call with an
   * Idempotency-Key, as a merchant server that retries would send it.
   */
  async function proxyWithGateway(
    t: TestContext,
    answer: (body: Record<string, unknown>) => { status: number; body: unknown },
  ) {
    const gateway = createServer((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => {
        text += String(chunk);
      });
      req.on('end', () => {
        const { status, body } = answer(JSON.parse(text) as Record<string, unknown>);
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => gateway.close(() => resolve())));
    const proxy = await startProxy({
      providerUrl: pair.provider.url,
      proxy: { gatewayUrl: `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`, backend: pair.backend },
    });
    t.after(() => proxy.close());
    const pay = (linkRef: string) =>
      fetch(`${proxy.baseUrl}/transactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: AUTH, 'idempotency-key': `pay-${linkRef}` },
        body: JSON.stringify(payment(linkRef)),
      });
    return Object.assign(pay, { baseUrl: proxy.baseUrl });
  }

  /** POST /transactions/{order}/reconcile on `baseUrl`. */
  function reconcile(baseUrl: string, order: string, body: Record<string, unknown>) {
    return fetch(`${baseUrl}/transactions/${order}/reconcile`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH },
      body: JSON.stringify(body),
    });
  }

  function submit(body: unknown, authorization?: string) {
    return fetch(`${pair.baseUrl}/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(authorization ? { authorization } : {}) },
      body: JSON.stringify(body),
    });
  }

  const payment = (linkRef: string, extra: Record<string, unknown> = {}) => ({
    linkRef,
    merchantUserId: PURCHASE.merchantUserId,
    merchantTransactionId: orderOf.get(linkRef) ?? PURCHASE.merchantTransactionId,
    amount: PURCHASE.amount,
    currency: PURCHASE.currency,
    ...extra,
  });

  async function problemOf(response: Response): Promise<{ type: string; errors?: { path: string }[] }> {
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    return (await response.json()) as { type: string; errors?: { path: string }[] };
  }

  test('redeems a link reference: the provider is charged with the stored accountToken', async () => {
    const linkRef = await verifiedLinkRef();
    const response = await submit(payment(linkRef), AUTH);
    assert.equal(response.status, 201);
    const body = (await response.json()) as Record<string, string>;
    assert.equal(body.transactionStatus, 'APPROVED');
    assert.equal(body.merchantTransactionId, orderOf.get(linkRef));
    const stored = pair.provider.state.transactions.get(body.transactionId!);
    assert.ok(stored?.accountToken && pair.provider.state.accounts.has(stored.accountToken));
    assert.notEqual(stored.accountToken, linkRef);
  });

  test('a reference that paid once cannot pay again: 409 with the first payment', async () => {
    const linkRef = await verifiedLinkRef();
    const first = (await (await submit(payment(linkRef), AUTH)).json()) as Record<string, string>;
    const before = pair.provider.stats.transactions;
    const again = await submit(payment(linkRef), AUTH);
    assert.equal(again.status, 409);
    const problem = (await problemOf(again)) as { type: string; payment?: Record<string, unknown> };
    assert.equal(problem.type, 'urn:obv-link:problem:order-already-paid');
    assert.equal(problem.payment?.transactionId, first.transactionId);
    assert.equal(problem.payment?.state, 'completed');
    assert.equal(pair.provider.stats.transactions, before);
  });

  test('an order is paid once, whatever link reference is offered: a second link for the same order gets 409 and the first result', async () => {
    const order = `order-${randomUUID()}`;
    const firstRef = await verifiedLinkRef({ merchantTransactionId: order });
    const secondRef = await verifiedLinkRef({ merchantTransactionId: order });
    assert.notEqual(firstRef, secondRef);
    const first = (await (await submit(payment(firstRef), AUTH)).json()) as Record<string, string>;
    assert.equal(first.transactionStatus, 'APPROVED');
    const before = pair.provider.stats.transactions;
    const second = await submit(payment(secondRef), AUTH);
    assert.equal(second.status, 409);
    const problem = (await problemOf(second)) as {
      type: string;
      errors?: { path: string }[];
      payment?: Record<string, unknown>;
    };
    assert.equal(problem.type, 'urn:obv-link:problem:order-already-paid');
    assert.deepEqual(
      problem.errors?.map((e) => e.path),
      ['merchantTransactionId'],
    );
    assert.deepEqual(
      {
        transactionId: problem.payment?.transactionId,
        transactionStatus: problem.payment?.transactionStatus,
        amount: problem.payment?.amount,
      },
      { transactionId: first.transactionId, transactionStatus: 'APPROVED', amount: PURCHASE.amount },
    );
    assert.equal(pair.provider.stats.transactions, before, 'the provider was not called again');
  });

  test('honours an Idempotency-Key: the same key and body answer the first result, the provider is called once', async () => {
    const linkRef = await verifiedLinkRef();
    const pay = () =>
      fetch(`${pair.baseUrl}/transactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: AUTH, 'idempotency-key': `pay-${linkRef}` },
        body: JSON.stringify(payment(linkRef)),
      });
    const before = pair.provider.stats.transactions;
    const first = await pay();
    const retry = await pay();
    assert.equal(first.status, 201);
    assert.equal(retry.status, 201);
    assert.equal(retry.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await retry.json(), await first.json());
    assert.equal(pair.provider.stats.transactions, before + 1);
  });

  test('sends the verified amount and currency upstream, and refuses another currency (422 naming currency)', async () => {
    const linkRef = await verifiedLinkRef();
    const euro = await submit(payment(linkRef, { currency: 'EUR' }), AUTH);
    assert.equal(euro.status, 422);
    assert.deepEqual(
      (await problemOf(euro)).errors?.map((e) => e.path),
      ['currency'],
    );
    const paid = (await (await submit(payment(linkRef), AUTH)).json()) as Record<string, string>;
    const recorded = pair.provider.state.transactions.get(paid.transactionId!);
    assert.deepEqual(
      { amount: recorded?.amount, currency: recorded?.currency },
      { amount: PURCHASE.amount, currency: 'USD' },
    );
  });

  test('refuses unknown fields with 400 naming each (nothing passes through to the provider)', async () => {
    const linkRef = await verifiedLinkRef();
    const before = pair.provider.stats.transactions;
    const response = await submit(
      payment(linkRef, { transaction: { amount: '99999.00' }, accountToken: 'acct_x' }),
      AUTH,
    );
    assert.equal(response.status, 400);
    assert.deepEqual((await problemOf(response)).errors?.map((e) => e.path).sort(), ['accountToken', 'transaction']);
    assert.equal(pair.provider.stats.transactions, before);
  });

  test('GET /transactions/{merchantTransactionId} returns what was paid; 404 for an order never paid', async () => {
    const linkRef = await verifiedLinkRef();
    const order = orderOf.get(linkRef)!;
    const read = () =>
      fetch(`${pair.baseUrl}/transactions/${encodeURIComponent(order)}`, { headers: { authorization: AUTH } });
    const none = await read();
    assert.equal(none.status, 404);
    assert.deepEqual(
      (await problemOf(none)).errors?.map((e) => e.path),
      ['merchantTransactionId'],
    );
    const paid = (await (await submit(payment(linkRef), AUTH)).json()) as Record<string, string>;
    const view = (await (await read()).json()) as Record<string, unknown>;
    assert.equal(view.merchantTransactionId, order);
    assert.equal(view.state, 'completed');
    assert.equal(view.transactionId, paid.transactionId);
    assert.equal(view.transactionStatus, 'APPROVED');
    assert.equal(view.amount, PURCHASE.amount);
    assert.equal(view.currency, 'USD');
    assert.equal(view.accountLabel, 'Checking ••••4321');
    assert.match(String(view.paidAt), /^\d{4}-\d{2}-\d{2}T/);
    assert.equal(JSON.stringify(view).includes(linkRef), false, 'the view names no link reference');
    assert.equal((await fetch(`${pair.baseUrl}/transactions/${encodeURIComponent(order)}`)).status, 401);
  });

  test('two concurrent payments with one reference: exactly one is charged', async () => {
    const linkRef = await verifiedLinkRef();
    const before = pair.provider.stats.transactions;
    const statuses = (await Promise.all(Array.from({ length: 5 }, () => submit(payment(linkRef), AUTH)))).map(
      (r) => r.status,
    );
    assert.deepEqual(statuses.sort(), [201, 409, 409, 409, 409]);
    assert.equal(pair.provider.stats.transactions, before + 1);
  });

  test('refuses a reference replayed for another order, another user or another amount (422 naming the field)', async () => {
    const linkRef = await verifiedLinkRef();
    const before = pair.provider.stats.transactions;
    for (const [field, value] of [
      ['merchantTransactionId', 'order-other'],
      ['merchantUserId', 'user-other'],
      ['amount', '999.00'],
    ] as const) {
      const response = await submit(payment(linkRef, { [field]: value }), AUTH);
      assert.equal(response.status, 422, field);
      const problem = await problemOf(response);
      assert.equal(problem.type, 'urn:obv-link:problem:link-ref-mismatch');
      assert.deepEqual(
        problem.errors?.map((e) => e.path),
        [field],
      );
    }
    assert.equal(pair.provider.stats.transactions, before);
    // Refusals do not use the reference up: the right order still pays.
    assert.equal((await submit(payment(linkRef), AUTH)).status, 201);
  });

  test('refuses an unknown link reference with 404 naming linkRef', async () => {
    const response = await submit(payment('AAAAAAAAAAAAAAAAAAAAAA'), AUTH);
    assert.equal(response.status, 404);
    assert.deepEqual(
      (await problemOf(response)).errors?.map((e) => e.path),
      ['linkRef'],
    );
  });

  test('refuses an accountToken in place of a reference: the route takes references only', async () => {
    const linkRef = await verifiedLinkRef();
    const token = (await (
      await fetch(`${pair.baseUrl}/links/${linkRef}`, { headers: { authorization: AUTH } })
    ).json()) as { accountToken: string };
    const response = await submit({ ...payment(linkRef), linkRef: token.accountToken }, AUTH);
    assert.ok(response.status === 400 || response.status === 404, `status ${response.status}`);
  });

  test('GET /links/:linkRef gives the merchant server the verified account, token included, and what it paid', async () => {
    const linkRef = await verifiedLinkRef();
    const read = async () =>
      (await (await fetch(`${pair.baseUrl}/links/${linkRef}`, { headers: { authorization: AUTH } })).json()) as Record<
        string,
        unknown
      >;
    const account = await read();
    assert.ok(pair.provider.state.accounts.has(String(account.accountToken)));
    assert.equal(account.linkRef, linkRef);
    assert.equal(account.accountLabel, 'Checking ••••4321');
    assert.equal(account.merchantUserId, PURCHASE.merchantUserId);
    assert.equal(account.merchantTransactionId, orderOf.get(linkRef));
    assert.equal(account.amount, PURCHASE.amount);
    assert.equal(account.redeemedFor, undefined);
    await submit(payment(linkRef), AUTH);
    assert.equal((await read()).redeemedFor, orderOf.get(linkRef));
  });

  test('GET /links/:linkRef needs the merchant API key', async () => {
    const linkRef = await verifiedLinkRef();
    const response = await fetch(`${pair.baseUrl}/links/${linkRef}`);
    assert.equal(response.status, 401);
    assert.ok(!(await response.text()).includes('accountToken'));
  });

  test('refuses a call without the merchant API key', async () => {
    const before = pair.provider.stats.transactions;
    const response = await submit(payment('AAAAAAAAAAAAAAAAAAAAAA'));
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('content-type'), 'application/problem+json; charset=utf-8');
    assert.equal(pair.provider.stats.transactions, before);
  });

  test('refuses a wrong merchant API key', async () => {
    const response = await submit(payment('AAAAAAAAAAAAAAAAAAAAAA'), `${AUTH}x`);
    assert.equal(response.status, 401);
  });

  test("passes the provider's refusal through and lets the reference be tried again", async () => {
    const linkRef = await verifiedLinkRef();
    pair.provider.state.accounts.clear();
    const refused = await submit(payment(linkRef), AUTH);
    assert.equal(refused.status, 422);
    assert.equal(((await refused.json()) as { errors: { path: string }[] }).errors[0]?.path, 'accountToken');
    const redeemed = (await (
      await fetch(`${pair.baseUrl}/links/${linkRef}`, { headers: { authorization: AUTH } })
    ).json()) as Record<string, unknown>;
    assert.equal(redeemed.redeemedFor, undefined);
  });

  test('names missing fields in a 400', async () => {
    const response = await submit({ merchantTransactionId: '' }, AUTH);
    assert.equal(response.status, 400);
    const body = (await response.json()) as { errors: { path: string }[] };
    assert.deepEqual(body.errors.map((e) => e.path).sort(), [
      'amount',
      'currency',
      'linkRef',
      'merchantTransactionId',
      'merchantUserId',
    ]);
  });

  test("keeps only the known fields of the provider's answer: a replay carries no echoed credential", async (t) => {
    const payThroughGateway = await proxyWithGateway(t, (body) => ({
      status: 201,
      body: {
        transactionId: 'txn_echo',
        transactionStatus: 'APPROVED',
        merchantTransactionId: (body.merchant as Record<string, unknown>).merchantTransactionId,
        accountToken: body.accountToken,
      },
    }));
    const linkRef = await verifiedLinkRef();
    const pay = () => payThroughGateway(linkRef);
    assert.equal((await pay()).status, 201);
    const replay = await pay();
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.deepEqual(await replay.json(), {
      transactionId: 'txn_echo',
      transactionStatus: 'APPROVED',
      merchantTransactionId: orderOf.get(linkRef),
    });
  });

  test('has no transactions or links route when OBV_MERCHANT_API_KEY is not set', async (t) => {
    const bare = await startProxy({ providerUrl: pair.provider.url, proxy: { merchantApiKey: undefined } });
    t.after(() => bare.close());
    const response = await fetch(`${bare.baseUrl}/transactions`, {
      method: 'POST',
      headers: { authorization: 'Bearer anything' },
    });
    assert.equal(response.status, 404);
    assert.equal(
      (await fetch(`${bare.baseUrl}/links/AAAAAAAAAAAAAAAAAAAAAA`, { headers: { authorization: 'Bearer anything' } }))
        .status,
      404,
    );
  });

  test('a 5xx from the gateway may have charged: the reference stays used and is not sent twice', async (t) => {
    let charges = 0;
    const payThroughGateway = await proxyWithGateway(t, () => {
      charges += 1;
      return { status: 502, body: { error: 'upstream hiccup' } };
    });
    const linkRef = await verifiedLinkRef();
    // The merchant's server retries the 502 with the same Idempotency-Key, as a client of an idempotent API would.
    const pay = () => payThroughGateway(linkRef);
    assert.equal((await pay()).status, 502);
    const again = await pay();
    assert.equal(again.status, 409, 'an unknown result is never replayed as a success');
    assert.equal(again.headers.get('idempotent-replayed'), null);
    assert.equal(
      ((await again.json()) as { payment?: { state?: string } }).payment?.state,
      'unknown',
      "the order's payment is unknown: reconcile",
    );
    assert.equal(charges, 1, 'the gateway saw one charge');
  });

  for (const kind of ['5xx', 'timeout'] as const) {
    test(`a token endpoint ${kind === '5xx' ? 'answering 503' : 'that never answers'} frees the order: endpoint 4 was never called, and the order is paid on the next try`, async (t) => {
      const linkRef = await verifiedLinkRef();
      const order = orderOf.get(linkRef)!;
      // A second instance on the same records, whose token cache is cold: its payment asks endpoint 1 first.
      const cold = await startProxy({
        providerUrl: pair.provider.url,
        proxy: { backend: pair.backend, upstreamTimeoutMs: 300, tokenRetry: { limit: 0 } },
      });
      t.after(() => cold.close());
      t.after(() => {
        pair.provider.faults.tokenFailures = { count: 0, kind: '5xx' };
      });
      pair.provider.faults.tokenFailures = { count: 1, kind };
      const chargesBefore = pair.provider.stats.transactions;
      const pay = () =>
        fetch(`${cold.baseUrl}/transactions`, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            authorization: AUTH,
            'idempotency-key': `token-${kind}-${linkRef}`,
          },
          body: JSON.stringify(payment(linkRef)),
        });
      const failed = await pay();
      assert.equal(failed.status, kind === '5xx' ? 502 : 504);
      assert.equal(
        (await problemOf(failed)).type,
        `urn:obv-link:problem:${kind === '5xx' ? 'upstream-unavailable' : 'upstream-timeout'}`,
      );
      assert.equal(pair.provider.stats.transactions, chargesBefore, 'endpoint 4 never saw the payment');
      assert.equal(
        (await fetch(`${cold.baseUrl}/transactions/${order}`, { headers: { authorization: AUTH } })).status,
        404,
        'the order is free, not unknown',
      );
      // The token endpoint is back: the same request pays the order, once.
      const paid = await pay();
      assert.equal(paid.status, 201);
      assert.equal(pair.provider.stats.transactions, chargesBefore + 1);
    });
  }

  test('a provider 409 may be a duplicate that charged: the payment is unknown, never freed for a second call', async (t) => {
    let charges = 0;
    const payThroughGateway = await proxyWithGateway(t, () => {
      charges += 1;
      return { status: 409, body: { error: 'duplicate transaction' } };
    });
    const linkRef = await verifiedLinkRef();
    assert.equal((await payThroughGateway(linkRef)).status, 409);
    const again = await payThroughGateway(linkRef);
    assert.equal(again.status, 409);
    assert.equal(((await again.json()) as { payment?: { state?: string } }).payment?.state, 'unknown');
    assert.equal(charges, 1, 'the gateway saw one call');
  });

  test('an unknown payment is reconciled by the merchant: not-charged frees the order for a new payment, paid closes it', async (t) => {
    let calls = 0;
    let answer: { status: number; body: unknown } = { status: 504, body: {} };
    const payThroughGateway = await proxyWithGateway(t, (body) => {
      calls += 1;
      return {
        ...answer,
        body:
          answer.status < 300
            ? {
                transactionId: `txn_${calls}`,
                transactionStatus: 'APPROVED',
                merchantTransactionId: (body.merchant as Record<string, unknown>).merchantTransactionId,
              }
            : answer.body,
      };
    });
    const linkRef = await verifiedLinkRef();
    const order = orderOf.get(linkRef)!;
    assert.equal((await payThroughGateway(linkRef)).status, 502);
    const read = async () =>
      (await (
        await fetch(`${payThroughGateway.baseUrl}/transactions/${order}`, { headers: { authorization: AUTH } })
      ).json()) as { state: string; paymentId: string };
    const unknown = await read();
    assert.equal(unknown.state, 'unknown');
    // Another payment's id, a bad result, or no API key: refused, naming the field.
    const wrong = await reconcile(payThroughGateway.baseUrl, order, {
      paymentId: 'pay_someone_else',
      result: 'not-charged',
    });
    assert.equal(wrong.status, 404);
    assert.deepEqual(
      ((await wrong.json()) as { errors: { path: string }[] }).errors.map((e) => e.path),
      ['paymentId'],
    );
    const bad = await reconcile(payThroughGateway.baseUrl, order, { paymentId: unknown.paymentId, result: 'perhaps' });
    assert.equal(bad.status, 400);
    assert.deepEqual(
      ((await bad.json()) as { errors: { path: string }[] }).errors.map((e) => e.path),
      ['result'],
    );
    // The provider says nothing was charged: the order may be paid again, and is.
    const freed = await reconcile(payThroughGateway.baseUrl, order, {
      paymentId: unknown.paymentId,
      result: 'not-charged',
    });
    assert.equal(freed.status, 200);
    assert.deepEqual(await freed.json(), {
      merchantTransactionId: order,
      paymentId: unknown.paymentId,
      result: 'not-charged',
      payable: true,
    });
    // Recorded, not deleted: the payment stays on record with its reconciliation, and is not reconciled twice.
    const recorded = (await read()) as { state: string; paymentId: string; reconciled?: { result: string } };
    assert.equal(recorded.state, 'not-charged');
    assert.equal(recorded.paymentId, unknown.paymentId);
    assert.equal(recorded.reconciled?.result, 'not-charged');
    assert.equal(
      (await reconcile(payThroughGateway.baseUrl, order, { paymentId: unknown.paymentId, result: 'paid' })).status,
      409,
    );
    answer = { status: 201, body: {} };
    const paid = await fetch(`${payThroughGateway.baseUrl}/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH, 'idempotency-key': `pay-again-${linkRef}` },
      body: JSON.stringify(payment(linkRef)),
    });
    assert.equal(paid.status, 201);
    const completed = await read();
    assert.equal(completed.state, 'completed');
    assert.notEqual(completed.paymentId, unknown.paymentId, 'a new payment of the order has its own id');
    assert.equal(calls, 2);
    // A mistaken reconciliation stays visible: the order's earlier payment, as the merchant recorded it.
    const history = (await read()) as {
      earlierPayments?: { paymentId: string; state: string; reconciled?: { result: string } }[];
    };
    assert.deepEqual(
      history.earlierPayments?.map((p) => [p.paymentId, p.state, p.reconciled?.result]),
      [[unknown.paymentId, 'not-charged', 'not-charged']],
    );
    // A completed payment is never reconciled.
    const late = await reconcile(payThroughGateway.baseUrl, order, {
      paymentId: completed.paymentId,
      result: 'not-charged',
    });
    assert.equal(late.status, 409);
    assert.equal((await read()).state, 'completed');
  });

  test('a 2xx whose transactionStatus is declined charged nothing (the order is free, payment.failed); one neither paid nor declined is unknown', async (t) => {
    let status = 'DECLINED';
    let calls = 0;
    const payThroughGateway = await proxyWithGateway(t, (body) => {
      calls += 1;
      return {
        status: 201,
        body: {
          transactionId: `txn_${calls}`,
          transactionStatus: status,
          merchantTransactionId: (body.merchant as Record<string, unknown>).merchantTransactionId,
        },
      };
    });
    const read = async (order: string) =>
      (await (
        await fetch(`${payThroughGateway.baseUrl}/transactions/${order}`, { headers: { authorization: AUTH } })
      ).json()) as { state?: string; type?: string };
    const declinedRef = await verifiedLinkRef();
    assert.equal((await payThroughGateway(declinedRef)).status, 201, "the provider's answer is passed through");
    assert.equal(
      (await read(orderOf.get(declinedRef)!)).type,
      'urn:obv-link:problem:unknown-payment',
      'declined: no payment on record, the order is free',
    );
    status = 'APPROVED';
    const again = await fetch(`${payThroughGateway.baseUrl}/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: AUTH, 'idempotency-key': `retry-${declinedRef}` },
      body: JSON.stringify(payment(declinedRef)),
    });
    assert.equal(again.status, 201);
    assert.equal((await read(orderOf.get(declinedRef)!)).state, 'completed');

    status = 'PENDING_REVIEW';
    const oddRef = await verifiedLinkRef();
    assert.equal((await payThroughGateway(oddRef)).status, 201);
    assert.equal((await read(orderOf.get(oddRef)!)).state, 'unknown', 'neither paid nor declined: reconcile');
    assert.equal((await payThroughGateway(oddRef)).status, 409, 'and never sent again');
    assert.equal(calls, 3);
  });

  test("an Idempotency-Key is one payment's: reused for another order, or with another body on the same order, it is 422 naming the header", async () => {
    const first = await verifiedLinkRef();
    const second = await verifiedLinkRef();
    const withKey = (body: unknown, key: string) =>
      fetch(`${pair.baseUrl}/transactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: AUTH, 'idempotency-key': key },
        body: JSON.stringify(body),
      });
    const key = `key-${randomUUID()}`;
    assert.equal((await withKey(payment(first), key)).status, 201);
    const charged = pair.provider.stats.transactions;
    for (const body of [payment(second), { ...payment(first), product: 'other' }]) {
      const response = await withKey(body, key);
      assert.equal(response.status, 422);
      const problem = (await response.json()) as { type: string; errors: { path: string }[] };
      assert.equal(problem.type, 'urn:obv-link:problem:idempotency-key-reused');
      assert.deepEqual(
        problem.errors.map((e) => e.path),
        ['Idempotency-Key'],
      );
    }
    assert.equal(pair.provider.stats.transactions, charged, 'no payment was sent for the reused key');
  });
});
