// The Python shop's verification of merchant events (examples/python-shop/webhooks.py): an event signed
// the Standard Webhooks way (here by the same library the proxy uses) is accepted; a tampered, unsigned,
// stale or wrongly keyed one is refused before it is read, so it has no effect.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { signNotification } from '../../helpers/webhooks.ts';
import { startPythonShop, type RunningPythonShop } from '../../helpers/python-shop.ts';

const EVENTS_SECRET = 'whsec_cHl0aG9uLXNob3AtZXZlbnRzLXNlY3JldC0wMTIzNDU2Nzg5';
const OTHER_SECRET = 'whsec_YW5vdGhlci1zZWNyZXQtdGhhdC1pcy1ub3QtdGhlLXNob3Bz';

const event = {
  id: 'evt_3q2Ww8b1XyQhKZ0m4rS7tA',
  type: 'link.succeeded',
  createdAt: '2026-11-24T04:31:07.112Z',
  data: {
    merchantUserId: 'user-8231',
    merchantTransactionId: 'order-unknown',
    amount: '49.99',
    currency: 'USD',
    linkRef: 'AAAAAAAAAAAAAAAAAAAAAA',
    accountLabel: 'Checking ••••4321',
    fiName: 'Sandbox Federal Bank',
    fiAccountType: 'CHECKING',
  },
};

describe('the Python shop verifies merchant events', () => {
  let shop: RunningPythonShop;
  before(async () => {
    // The proxy is not needed to receive events: nothing here creates an order.
    shop = await startPythonShop({
      OBV_PROXY_URL: 'http://127.0.0.1:9/obv',
      OBV_MERCHANT_API_KEY: 'unused-in-this-test',
      OBV_EVENTS_SECRETS: EVENTS_SECRET,
    });
  });
  after(() => shop.close());

  const deliver = (body: string, headers: Record<string, string>) =>
    fetch(`${shop.url}/obv-events`, { method: 'POST', headers, body });
  const signed = (options: Parameters<typeof signNotification>[1] = {}) =>
    signNotification(event, { id: event.id, secret: EVENTS_SECRET, ...options });

  test("accepts an event signed with its secret, also beside another secret's signature (a rotation)", async () => {
    const { body, headers } = signed();
    assert.equal((await deliver(body, headers)).status, 204);
    const other = signNotification(event, {
      id: event.id,
      secret: OTHER_SECRET,
      timestamp: new Date(Number(headers['webhook-timestamp']) * 1000),
    });
    const both = `${other.headers['webhook-signature']} ${headers['webhook-signature']}`;
    assert.equal((await deliver(body, { ...headers, 'webhook-signature': both })).status, 204);
  });

  test("refuses a tampered body, a changed id or timestamp, and another secret's signature", async () => {
    const { body, headers } = signed();
    const cases: [string, string, Record<string, string>][] = [
      ['tampered body', body.replace('order-unknown', 'order-other'), headers],
      ['changed webhook-id', body, { ...headers, 'webhook-id': 'evt_other' }],
      [
        'changed timestamp',
        body,
        { ...headers, 'webhook-timestamp': String(Number(headers['webhook-timestamp']) - 1) },
      ],
      [
        'another secret',
        ...(() => {
          const other = signNotification(event, { id: event.id, secret: OTHER_SECRET });
          return [other.body, other.headers] as const;
        })(),
      ],
      [
        'a v2 signature',
        body,
        { ...headers, 'webhook-signature': headers['webhook-signature']!.replace('v1,', 'v2,') },
      ],
    ];
    for (const [name, sentBody, sentHeaders] of cases)
      assert.equal((await deliver(sentBody, sentHeaders)).status, 401, name);
  });

  test('refuses an unsigned event and one signed outside the five-minute tolerance', async () => {
    const { body, headers } = signed();
    const { 'webhook-signature': _signature, ...unsigned } = headers;
    assert.equal((await deliver(body, unsigned)).status, 401, 'no signature');
    assert.equal(
      (await deliver(body, { 'content-type': 'application/json' })).status,
      401,
      'no webhook headers at all',
    );
    const stale = signed({ timestamp: new Date(Date.now() - 6 * 60_000) });
    assert.equal((await deliver(stale.body, stale.headers)).status, 401, 'six minutes old');
    const future = signed({ timestamp: new Date(Date.now() + 6 * 60_000) });
    assert.equal((await deliver(future.body, future.headers)).status, 401, 'six minutes ahead');
    assert.match(shop.child.output(), /refused an event: no signature matches/);
    assert.match(shop.child.output(), /refused an event: missing webhook-id, webhook-timestamp or webhook-signature/);
    assert.match(shop.child.output(), /refused an event: webhook-timestamp is outside the tolerance/);
  });
});

describe("the Python shop takes the proxy's comma list of events secrets", () => {
  let shop: RunningPythonShop;
  before(async () => {
    shop = await startPythonShop({
      OBV_PROXY_URL: 'http://127.0.0.1:9/obv',
      OBV_MERCHANT_API_KEY: 'unused-in-this-test',
      OBV_EVENTS_SECRETS: ` ${OTHER_SECRET} , ${EVENTS_SECRET} `,
    });
  });
  after(() => shop.close());

  test('accepts an event signed with any secret of the list alone, and refuses one signed with none of them', async () => {
    for (const secret of [EVENTS_SECRET, OTHER_SECRET]) {
      const { body, headers } = signNotification(event, { id: event.id, secret });
      const response = await fetch(`${shop.url}/obv-events`, { method: 'POST', headers, body });
      assert.equal(response.status, 204, secret);
    }
    const stranger = 'whsec_c29tZS10aGlyZC1zZWNyZXQtbm9ib2R5LWNvbmZpZ3VyZWQ=';
    const { body, headers } = signNotification(event, { id: event.id, secret: stranger });
    assert.equal((await fetch(`${shop.url}/obv-events`, { method: 'POST', headers, body })).status, 401);
  });
});
