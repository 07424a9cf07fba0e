// The token manager and the bearer handling of the upstream clients, against the sandbox provider
// (and, for answers the sandbox never gives, a tiny scripted server).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { HTTPError } from 'ky';
import { startProvider, type RunningProvider } from '../../../sandbox/index.ts';
import {
  TokenError,
  type TokenErrorCode,
  UpstreamHttpError,
  UpstreamTimeoutError,
  UpstreamUnreachableError,
} from '../../../proxy/upstream/errors.ts';
import { TokenManager, type TokenManagerOptions } from '../../../proxy/upstream/token-manager.ts';
import { createVerificationClient, type VerificationRequest } from '../../../proxy/upstream/verification-client.ts';
import { createTransactionClient } from '../../../proxy/upstream/transaction-client.ts';
import { captureLogs } from '../../helpers/log-capture.ts';
import { SANDBOX_CLIENT } from '../../helpers/proxy-harness.ts';

/** A rejection matcher: a TokenError whose typed code is `code`. */
const tokenError = (code: TokenErrorCode) => (error: unknown) => error instanceof TokenError && error.code === code;

const REQUEST: VerificationRequest = {
  countryCode: 'US',
  consumer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
  merchant: {
    merchantId: 'm-1',
    merchantUserId: 'u-1',
    merchantTransactionId: 't-1',
    returnURL: 'http://127.0.0.1:9/return',
    notificationURL: 'http://127.0.0.1:9/notify',
  },
  transaction: { amount: '1.00', currency: 'USD', product: 'ACH' },
};

/** A loopback server answering every request with `handler`; counts requests. */
async function scriptedServer(handler: http.RequestListener) {
  let requests = 0;
  const server = http.createServer((req, res) => {
    requests++;
    handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return requests;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe('token manager against the sandbox', () => {
  let provider: RunningProvider;
  const logs = captureLogs();
  const manager = (overrides: Partial<TokenManagerOptions> = {}) =>
    new TokenManager({
      baseUrl: provider.url,
      ...SANDBOX_CLIENT,
      scope: 'obv/token-request',
      timeoutMs: 2_000,
      retryDelayMs: 10,
      logger: logs.logger,
      ...overrides,
    });

  before(async () => {
    provider = await startProvider({ port: 0 });
  });
  after(() => provider.close());

  test('reuses a cached token instead of asking again', async () => {
    const tokens = manager();
    const before = provider.stats.tokenRequests;
    const first = await tokens.getToken();
    const second = await tokens.getToken();
    assert.equal(first, second);
    assert.equal(provider.stats.tokenRequests - before, 1);
  });

  test('makes exactly one token request for 100 concurrent callers on a cold cache', async () => {
    const tokens = manager();
    const before = provider.stats.tokenRequests;
    const results = await Promise.all(Array.from({ length: 100 }, () => tokens.getToken()));
    assert.equal(provider.stats.tokenRequests - before, 1);
    assert.equal(new Set(results).size, 1);
  });

  test('asks for a new token shortly before expires_in runs out', async () => {
    let now = 1_000_000;
    const tokens = manager({ now: () => now });
    const before = provider.stats.tokenRequests;
    const first = await tokens.getToken();
    now += 3_600_000 - 61_000; // just before the 60 s refresh margin of a 1 h token
    assert.equal(await tokens.getToken(), first);
    now += 2_000; // inside the margin
    const second = await tokens.getToken();
    assert.notEqual(second, first);
    assert.equal(provider.stats.tokenRequests - before, 2);
  });

  test('retries a 503 from the token endpoint', async () => {
    provider.faults.tokenFailures = { count: 2, kind: '5xx' };
    const before = provider.stats.tokenRequests;
    assert.ok(await manager().getToken());
    assert.equal(provider.stats.tokenRequests - before, 3);
  });

  test('retries a token request that timed out', async () => {
    provider.faults.tokenFailures = { count: 1, kind: 'timeout' };
    const before = provider.stats.tokenRequests;
    assert.ok(await manager({ timeoutMs: 300 }).getToken());
    assert.equal(provider.stats.tokenRequests - before, 2);
  });

  test('gives up with UpstreamTimeoutError when every attempt times out', async () => {
    provider.faults.tokenFailures = { count: 3, kind: 'timeout' };
    await assert.rejects(manager({ timeoutMs: 200, retryLimit: 2 }).getToken(), UpstreamTimeoutError);
    provider.faults.tokenFailures = { count: 0, kind: '5xx' };
  });

  test('reports a wrong secret as invalid_client, naming the variables and never the secret', async () => {
    const secret = 'definitely-wrong-secret';
    const error = await manager({ clientSecret: secret })
      .getToken()
      .then(
        () => assert.fail('expected a token error'),
        (e: unknown) => e,
      );
    assert.ok(error instanceof TokenError);
    assert.equal(error.code, 'invalid_client');
    assert.match(error.message, /the configured OBV_CLIENT_ID\/OBV_CLIENT_SECRET were rejected/);
    assert.match(
      error.message,
      new RegExp(`^POST ${provider.url}/exp/auth/mint/v1/oauth2/token\\?grant_type=client_credentials`),
    );
    assert.ok(!error.message.includes(secret));
    assert.ok(error.cause instanceof HTTPError);
  });

  test('reports a revoked client as invalid_grant', async () => {
    await assert.rejects(
      manager({ clientId: 'revoked_client', clientSecret: 'revoked_secret' }).getToken(),
      tokenError('invalid_grant'),
    );
  });

  test('reports a client not allowed this service as unauthorized_client', async () => {
    await assert.rejects(
      manager({ clientId: 'limited_client', clientSecret: 'limited_secret' }).getToken(),
      tokenError('unauthorized_client'),
    );
  });

  test('reports a wrong scope as invalid_request', async () => {
    await assert.rejects(manager({ scope: 'something/else' }).getToken(), tokenError('invalid_request'));
  });

  test('drops a revoked bearer and retries endpoint 2 once with a fresh token', async () => {
    const tokens = manager();
    const client = createVerificationClient({ baseUrl: provider.url, tokens, timeoutMs: 2_000 });
    const stale = await tokens.getToken();
    provider.revokeToken(stale);
    const before = provider.stats.tokenRequests;
    const response = await client.start(REQUEST);
    assert.ok(response.consumerUrl.startsWith(provider.url));
    assert.equal(provider.stats.tokenRequests - before, 1);
    assert.notEqual(await tokens.getToken(), stale);
  });

  test('shares one token refresh between concurrent calls that all met a revoked bearer', async () => {
    const tokens = manager();
    const client = createVerificationClient({ baseUrl: provider.url, tokens, timeoutMs: 2_000 });
    provider.revokeToken(await tokens.getToken());
    const before = provider.stats.tokenRequests;
    const results = await Promise.all(Array.from({ length: 20 }, () => client.start(REQUEST)));
    assert.equal(results.length, 20);
    assert.equal(provider.stats.tokenRequests - before, 1);
  });

  test('refreshes after the provider expired every token, for endpoint 4 too', async () => {
    const tokens = manager();
    const verifications = createVerificationClient({ baseUrl: provider.url, tokens, timeoutMs: 2_000 });
    const transactions = createTransactionClient({
      gatewayUrl: provider.url,
      tokens,
      timeoutMs: 2_000,
      pgwAppId: 'sandbox-app',
      pgwClientId: 'sandbox_client',
    });
    await verifications.start(REQUEST);
    provider.expireTokens();
    const before = provider.stats.tokenRequests;
    const result = await transactions.submit({
      product: 'ACH',
      countryCode: 'US',
      merchant: { merchantId: 'm-1', merchantTransactionId: 't-9', merchantUserId: 'u-1' },
      accountToken: 'unknown-token',
    });
    assert.equal(result.status, 422); // the provider's own verdict on an unknown accountToken, passed through
    assert.equal(provider.stats.tokenRequests - before, 1);
  });
});

describe('upstream answers the sandbox never gives', () => {
  const logs = captureLogs();

  for (const [code, typed] of [
    ['invalid_request', 'invalid_request'],
    ['invalid_client', 'invalid_client'],
    ['invalid_grant', 'invalid_grant'],
    ['unauthorized_client', 'unauthorized_client'],
    ['unsupported_grant_type', 'unsupported_grant_type'],
    ['invalid_scope', 'invalid_scope'],
    ['temporarily_broken', 'unknown'],
  ] as const) {
    test(`types an RFC 6749 ${code} answer as a TokenError with code ${typed}`, async (t) => {
      const server = await scriptedServer((_req, res) => {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: code, error_description: `because ${code}` }));
      });
      t.after(() => server.close());
      const tokens = new TokenManager({
        baseUrl: server.url,
        ...SANDBOX_CLIENT,
        scope: 's',
        timeoutMs: 1_000,
        logger: logs.logger,
      });
      const error = await tokens.getToken().then(
        () => assert.fail('expected an error'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof TokenError && error.code === typed, `got ${String(error)}`);
      assert.equal(error.sentCode, code);
      assert.match((error as Error).message, new RegExp(`provider said: because ${code}`));
      assert.equal(server.requests, 1, 'a 4xx is not retried');
    });
  }

  test('retries endpoint 2 only once when every bearer is refused, then reports the 401', async (t) => {
    const server = await scriptedServer((req, res) => {
      if (req.url?.startsWith('/exp/auth')) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: `tok-${Math.random()}`, expires_in: 3600, token_type: 'Bearer' }));
        return;
      }
      res.writeHead(401, { 'content-type': 'application/problem+json' }).end('{"status":401}');
    });
    t.after(() => server.close());
    const tokens = new TokenManager({
      baseUrl: server.url,
      ...SANDBOX_CLIENT,
      scope: 's',
      timeoutMs: 1_000,
      logger: logs.logger,
    });
    const client = createVerificationClient({ baseUrl: server.url, tokens, timeoutMs: 1_000 });
    const error = await client.start(REQUEST).then(
      () => assert.fail('expected an error'),
      (e: unknown) => e,
    );
    assert.ok(error instanceof UpstreamHttpError);
    assert.equal(error.status, 401);
    assert.equal(server.requests, 4, 'two token requests and two verification requests');
  });

  test('sends the token request as docs/UPSTREAM.md#endpoint-1-token says: POST, Basic credentials, grant_type and scope in the query', async (t) => {
    let seen: { method?: string; url?: string; authorization?: string; contentType?: string } = {};
    const server = await scriptedServer((req, res) => {
      seen = {
        method: req.method,
        url: req.url,
        authorization: req.headers.authorization,
        contentType: req.headers['content-type'],
      };
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ access_token: 'tok', expires_in: 3600, token_type: 'Bearer' }));
    });
    t.after(() => server.close());
    const tokens = new TokenManager({
      baseUrl: `${server.url}/`,
      clientId: 'id:with colon',
      clientSecret: 's3cr3t/+',
      scope: 'obv/token-request',
      timeoutMs: 1_000,
      logger: logs.logger,
    });
    assert.equal(await tokens.getToken(), 'tok');
    assert.equal(seen.method, 'POST');
    const url = new URL(seen.url ?? '', server.url);
    assert.equal(url.pathname, '/exp/auth/mint/v1/oauth2/token');
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      grant_type: 'client_credentials',
      scope: 'obv/token-request',
    });
    assert.equal(seen.contentType, 'application/x-www-form-urlencoded');
    // RFC 6749 §2.3.1: each part form-urlencoded, then Basic.
    const [user, password] = Buffer.from((seen.authorization ?? '').replace(/^Basic /, ''), 'base64')
      .toString('utf8')
      .split(':');
    assert.equal(decodeURIComponent(user!), 'id:with colon');
    assert.equal(decodeURIComponent(password!), 's3cr3t/+');
  });

  test('retries endpoint 4 only once when every bearer is refused, then reports the 401', async (t) => {
    let transactionRequests = 0;
    const server = await scriptedServer((req, res) => {
      if (req.url?.startsWith('/exp/auth')) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: `tok-${Math.random()}`, expires_in: 3600, token_type: 'Bearer' }));
        return;
      }
      transactionRequests++;
      res.writeHead(401, { 'content-type': 'application/problem+json' }).end('{"status":401}');
    });
    t.after(() => server.close());
    const tokens = new TokenManager({
      baseUrl: server.url,
      ...SANDBOX_CLIENT,
      scope: 's',
      timeoutMs: 1_000,
      logger: logs.logger,
    });
    const transactions = createTransactionClient({
      gatewayUrl: server.url,
      tokens,
      timeoutMs: 1_000,
      pgwAppId: 'app',
      pgwClientId: 'client',
    });
    const error = await transactions
      .submit({
        product: 'ACH',
        countryCode: 'US',
        merchant: { merchantId: 'm-1', merchantTransactionId: 't-1' },
        accountToken: 'acct',
      })
      .then(
        () => assert.fail('expected an error'),
        (e: unknown) => e,
      );
    assert.ok(error instanceof UpstreamHttpError);
    assert.equal(error.status, 401);
    assert.equal(transactionRequests, 2, 'the first attempt and one retry with a fresh token');
    assert.equal(server.requests, 4, 'two token requests and two transaction requests');
  });

  test('does not retry a 503 from endpoint 2 (the verification may exist)', async (t) => {
    const server = await scriptedServer((req, res) => {
      if (req.url?.startsWith('/exp/auth')) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ access_token: 'tok', expires_in: 3600, token_type: 'Bearer' }));
        return;
      }
      res.writeHead(503).end();
    });
    t.after(() => server.close());
    const tokens = new TokenManager({
      baseUrl: server.url,
      ...SANDBOX_CLIENT,
      scope: 's',
      timeoutMs: 1_000,
      logger: logs.logger,
    });
    const client = createVerificationClient({ baseUrl: server.url, tokens, timeoutMs: 1_000 });
    await assert.rejects(
      client.start(REQUEST),
      (error: unknown) => error instanceof UpstreamHttpError && error.status === 503,
    );
    assert.equal(server.requests, 2);
  });

  test('rejects a 200 from endpoint 2 without a usable consumerUrl', async (t) => {
    const server = await scriptedServer((req, res) => {
      const body = req.url?.startsWith('/exp/auth')
        ? { access_token: 'tok', expires_in: 3600, token_type: 'Bearer' }
        : { consumerUrl: 'javascript:alert(1)' };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    });
    t.after(() => server.close());
    const tokens = new TokenManager({
      baseUrl: server.url,
      ...SANDBOX_CLIENT,
      scope: 's',
      timeoutMs: 1_000,
      logger: logs.logger,
    });
    const client = createVerificationClient({ baseUrl: server.url, tokens, timeoutMs: 1_000 });
    await assert.rejects(client.start(REQUEST), /unexpected response from the provider: .*consumerUrl/);
  });

  test('reports a refused connection as UpstreamUnreachableError', async () => {
    const server = await scriptedServer((_req, res) => res.end());
    const url = server.url;
    await server.close();
    const tokens = new TokenManager({
      baseUrl: url,
      ...SANDBOX_CLIENT,
      scope: 's',
      timeoutMs: 1_000,
      retryDelayMs: 1,
      logger: logs.logger,
    });
    await assert.rejects(
      tokens.getToken(),
      (error: unknown) => error instanceof UpstreamUnreachableError && /ECONNREFUSED/.test(error.message),
    );
  });
});
