// Several merchant API keys at once (OBV_MERCHANT_API_KEYS / merchantApiKeys): a rotation without downtime.
// Every configured key is accepted; a key taken out of the list is refused; the id of the key a request used
// is on its log line and in /metrics, the key never; a list that could not say which key was used, or that
// holds a weak key, stops the proxy at boot.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import express from 'express';
import { configFromEnv, ConfigError, createObvProxy, parseProxyConfig } from '../../../proxy/index.ts';
import {
  PURCHASE,
  sandboxProxyConfig,
  startProxy,
  startProxyPair,
  type ProxyPair,
} from '../../helpers/proxy-harness.ts';
import { PRODUCTION_ENV } from '../../helpers/production-env.ts';

const OLD_KEY = 'Qm7Xr2Lp9Vt4Hs8Kd3Fj6Nw1Zb5Ya0Ce';
const NEW_KEY = 'Ht5Wq8Ds2Jm9Rk4Xv7Lb1Fn6Pz3Gc0Ya';
const SANDBOX_ENV = {
  OBV_SANDBOX: 'true',
  OBV_BASE_URL: 'http://127.0.0.1:4010',
  OBV_PUBLIC_URL: 'http://127.0.0.1:3000',
  OBV_PGW_APP_ID: 'app',
  OBV_PGW_CLIENT_ID: 'pgw',
};
const PRODUCTION = { ...PRODUCTION_ENV, OBV_PGW_APP_ID: 'app', OBV_PGW_CLIENT_ID: 'pgw' };

function issues(env: Record<string, string>): string[] {
  try {
    configFromEnv(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.map((issue) => `${issue.setting}: ${issue.message}`);
  }
  return [];
}

const linkSession = (baseUrl: string, key: string) =>
  fetch(`${baseUrl}/link-sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
    body: JSON.stringify({ ...PURCHASE, merchantTransactionId: `order-${Math.random().toString(36).slice(2)}` }),
  });

describe('several merchant API keys', () => {
  let pair: ProxyPair;
  before(async () => {
    pair = await startProxyPair({
      proxy: {
        merchantApiKey: undefined,
        merchantApiKeys: [
          { id: '2026-10', key: OLD_KEY },
          { id: '2026-11', key: NEW_KEY },
        ],
      },
    });
  });
  after(() => pair.close());

  test("both keys are accepted, each request logged and counted under its key's id; neither key is logged or in /metrics", async () => {
    assert.equal((await linkSession(pair.baseUrl, OLD_KEY)).status, 201);
    assert.equal((await linkSession(pair.baseUrl, NEW_KEY)).status, 201);
    assert.equal((await linkSession(pair.baseUrl, NEW_KEY)).status, 201);
    assert.equal((await linkSession(pair.baseUrl, `${NEW_KEY}x`)).status, 401, 'a near key is no key');
    assert.equal((await linkSession(pair.baseUrl, '')).status, 401);

    const lines = pair.logs.find('merchant API request');
    assert.deepEqual(
      lines.map((line) => [line.keyId, line.method, line.route]),
      [
        ['2026-10', 'POST', '/obv/link-sessions'],
        ['2026-11', 'POST', '/obv/link-sessions'],
        ['2026-11', 'POST', '/obv/link-sessions'],
      ],
    );
    const metrics = await pair.proxy.metrics.registry.metrics();
    assert.match(metrics, /^obv_merchant_api_requests_total\{key_id="2026-10"\} 1$/m);
    assert.match(metrics, /^obv_merchant_api_requests_total\{key_id="2026-11"\} 2$/m);
    for (const key of [OLD_KEY, NEW_KEY]) {
      assert.ok(!metrics.includes(key), 'no key in /metrics');
      assert.ok(!pair.logs.lines.some((line) => line.includes(key)), 'no key in a log line');
    }
  });

  test('a link reference in the path is not logged: GET /links/{linkRef} logs the route /obv/links', async () => {
    const response = await fetch(`${pair.baseUrl}/links/${'A'.repeat(22)}`, {
      headers: { authorization: `Bearer ${OLD_KEY}` },
    });
    assert.equal(response.status, 404);
    const [line] = pair.logs.find('merchant API request').slice(-1);
    assert.deepEqual([line?.keyId, line?.method, line?.route], ['2026-10', 'GET', '/obv/links']);
    assert.ok(!pair.logs.lines.some((text) => text.includes('A'.repeat(22))));
  });

  test('after the rotation the old key is refused (401) and the new one still pays; an unused id reads 0 in /metrics', async () => {
    const rotated = await startProxy({
      providerUrl: pair.provider.url,
      proxy: {
        merchantApiKey: undefined,
        merchantApiKeys: 'old-unused:Zk3Lq8Wn1Vr6Tb4Xs9Hd2Fm7Pc5Jy0Ga,2026-11:' + NEW_KEY,
      },
    });
    try {
      assert.equal((await linkSession(rotated.baseUrl, OLD_KEY)).status, 401);
      assert.equal((await linkSession(rotated.baseUrl, NEW_KEY)).status, 201);
      const metrics = await rotated.proxy.metrics.registry.metrics();
      assert.match(metrics, /^obv_merchant_api_requests_total\{key_id="old-unused"\} 0$/m);
      assert.match(metrics, /^obv_merchant_api_requests_total\{key_id="2026-11"\} 1$/m);
    } finally {
      await rotated.close();
    }
  });
});

describe('the one-key form OBV_MERCHANT_API_KEY', () => {
  test('still works: its key has the id default', async (t) => {
    const pair = await startProxyPair({ proxy: { merchantApiKey: OLD_KEY } });
    t.after(() => pair.close());
    assert.equal((await linkSession(pair.baseUrl, OLD_KEY)).status, 201);
    assert.equal(pair.logs.find('merchant API request')[0]?.keyId, 'default');
    assert.match(
      await pair.proxy.metrics.registry.metrics(),
      /^obv_merchant_api_requests_total\{key_id="default"\} 1$/m,
    );
  });
});

describe('OBV_MERCHANT_API_KEYS at boot', () => {
  test('reads id:key,id:key from the environment, and {id, key} objects in code', () => {
    assert.deepEqual(
      configFromEnv({ ...SANDBOX_ENV, OBV_MERCHANT_API_KEYS: ` a:${OLD_KEY} , b.2:${NEW_KEY} ` }).merchantApiKeys,
      [
        { id: 'a', key: OLD_KEY },
        { id: 'b.2', key: NEW_KEY },
      ],
    );
    assert.deepEqual(
      configFromEnv({ ...PRODUCTION, OBV_MERCHANT_API_KEYS: `a:${OLD_KEY},b:${NEW_KEY}` }).merchantApiKeys?.map(
        (key) => key.id,
      ),
      ['a', 'b'],
    );
    const inCode = parseProxyConfig({
      ...sandboxProxyConfig('http://127.0.0.1:9', 'http://127.0.0.1:9'),
      merchantApiKey: undefined,
      merchantApiKeys: [{ id: 'x', key: NEW_KEY }],
    });
    assert.deepEqual(inCode.merchantApiKeys, [{ id: 'x', key: NEW_KEY }]);
  });

  test('refuses duplicate ids, a key under two ids, both forms at once, bad ids, short keys, an empty list and more than 10 keys, naming the variable', () => {
    const refused: [string, Record<string, string>, RegExp][] = [
      [
        'duplicate id',
        { OBV_MERCHANT_API_KEYS: `a:${OLD_KEY},a:${NEW_KEY}` },
        /^OBV_MERCHANT_API_KEYS: key ids must be unique/,
      ],
      [
        'duplicate key',
        { OBV_MERCHANT_API_KEYS: `a:${OLD_KEY},b:${OLD_KEY}` },
        /^OBV_MERCHANT_API_KEYS: keys must differ/,
      ],
      [
        'both forms',
        { OBV_MERCHANT_API_KEYS: `a:${OLD_KEY}`, OBV_MERCHANT_API_KEY: NEW_KEY },
        /^OBV_MERCHANT_API_KEYS: is set with OBV_MERCHANT_API_KEY: use one of the two/,
      ],
      ['no id', { OBV_MERCHANT_API_KEYS: OLD_KEY }, /^OBV_MERCHANT_API_KEYS: each key must be id:key/],
      [
        'bad id',
        { OBV_MERCHANT_API_KEYS: `a b:${OLD_KEY}` },
        /^OBV_MERCHANT_API_KEYS: key id "a b" must be 1-32 letters/,
      ],
      [
        'short key',
        { OBV_MERCHANT_API_KEYS: 'a:short' },
        /^OBV_MERCHANT_API_KEYS: key a must be at least 24 characters/,
      ],
      ['empty', { OBV_MERCHANT_API_KEYS: ',' }, /^OBV_MERCHANT_API_KEYS: must name at least one key/],
      [
        'too many',
        {
          OBV_MERCHANT_API_KEYS: Array.from(
            { length: 11 },
            (_, i) => `k${i}:${OLD_KEY.slice(0, 30)}${String(i).padStart(4, '0')}`,
          ).join(','),
        },
        /^OBV_MERCHANT_API_KEYS: must name at most 10 keys/,
      ],
    ];
    for (const [what, env, expected] of refused) {
      const found = issues({ ...SANDBOX_ENV, ...env });
      assert.ok(
        found.some((issue) => expected.test(issue)),
        `${what}: ${JSON.stringify(found)}`,
      );
      assert.ok(
        !found.some((issue) => issue.includes(OLD_KEY) || issue.includes(NEW_KEY)),
        `${what}: the message never repeats a key`,
      );
    }
  });

  test("outside sandbox mode each key meets the production rules and holds no other role's secret, named by its id", () => {
    const weak = issues({
      ...PRODUCTION,
      OBV_MERCHANT_API_KEYS: `good:${NEW_KEY},weak:abcdefghijklmnopqrstuvwxyz012345`,
    });
    assert.deepEqual(
      weak
        .filter((issue) => issue.startsWith('OBV_MERCHANT_API_KEYS'))
        .map((issue) => /key (\w+) must be random/.exec(issue)?.[1]),
      ['weak'],
    );
    const same = issues({
      ...PRODUCTION,
      OBV_CLIENT_SECRET: NEW_KEY,
      OBV_MERCHANT_API_KEYS: `good:${OLD_KEY},again:${NEW_KEY}`,
    });
    assert.ok(
      same.some((issue) => /^OBV_MERCHANT_API_KEYS: key again is the same secret as OBV_CLIENT_SECRET/.test(issue)),
      JSON.stringify(same),
    );
  });

  test('createObvProxy refuses a bad list in code with a ConfigError naming merchantApiKeys', () => {
    assert.throws(
      () =>
        createObvProxy({
          ...sandboxProxyConfig('http://127.0.0.1:9', 'http://127.0.0.1:9'),
          merchantApiKey: undefined,
          merchantApiKeys: [
            { id: 'a', key: OLD_KEY },
            { id: 'a', key: NEW_KEY },
          ],
        }),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.issues.some((issue) => issue.setting === 'merchantApiKeys' && /unique/.test(issue.message)),
    );
    // Mounted as a merchant would, the proxy answers with either key.
    const proxy = createObvProxy({
      ...sandboxProxyConfig('http://127.0.0.1:9', 'http://127.0.0.1:9'),
      merchantApiKey: undefined,
      merchantApiKeys: [{ id: 'a', key: OLD_KEY }],
      logLevel: 'silent',
      defaultMetrics: false,
    });
    express().use(proxy.mountPath, proxy.router);
    return proxy.close();
  });
});
