import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { TOKEN_PATH, basicAuth, requestToken, startTestProvider } from './helpers.ts';

async function assertTokenError(response: Response, status: number, error: string): Promise<void> {
  assert.equal(response.status, status);
  assert.equal(response.headers.get('cache-control'), 'no-store');
  assert.match(response.headers.get('content-type') ?? '', /^application\/json/);
  const body = (await response.json()) as { error: string; error_description: string };
  assert.equal(body.error, error);
  assert.equal(typeof body.error_description, 'string');
  assert.ok(body.error_description.length > 0);
  // RFC 6749 §5.2: error_description is printable ASCII without '"' and '\'.
  assert.match(body.error_description, /^[\x20\x21\x23-\x5B\x5D-\x7E]+$/);
}

describe('token endpoint (endpoint 1)', () => {
  test('issues a bearer token for grant_type and scope given as query parameters', async (t) => {
    const provider = await startTestProvider(t, { tokenTtlSeconds: 120 });
    const response = await requestToken(provider.url);
    assert.equal(response.status, 200);
    assert.equal(response.headers.get('cache-control'), 'no-store');
    const body = (await response.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'token_type']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 120);
    assert.equal(typeof body.access_token, 'string');
    assert.equal(provider.stats.tokensIssued, 1);
  });

  test('also accepts grant_type and scope in the form body', async (t) => {
    const provider = await startTestProvider(t);
    const response = await requestToken(provider.url, {
      query: '',
      body: 'grant_type=client_credentials&scope=obv%2Ftoken-request',
    });
    assert.equal(response.status, 200);
  });

  test('answers invalid_request when the Content-Type is not form-urlencoded', async (t) => {
    const provider = await startTestProvider(t);
    await assertTokenError(
      await requestToken(provider.url, { contentType: 'application/json', body: '{}' }),
      400,
      'invalid_request',
    );
    await assertTokenError(await requestToken(provider.url, { contentType: null }), 400, 'invalid_request');
  });

  test('answers invalid_request when grant_type or scope is missing, wrong or repeated', async (t) => {
    const provider = await startTestProvider(t);
    await assertTokenError(
      await requestToken(provider.url, { query: 'scope=obv/token-request' }),
      400,
      'invalid_request',
    );
    await assertTokenError(
      await requestToken(provider.url, { query: 'grant_type=client_credentials' }),
      400,
      'invalid_request',
    );
    await assertTokenError(
      await requestToken(provider.url, { query: 'grant_type=client_credentials&scope=admin' }),
      400,
      'invalid_request',
    );
    await assertTokenError(
      await requestToken(provider.url, {
        query: 'grant_type=client_credentials&scope=obv/token-request&scope=obv/token-request',
      }),
      400,
      'invalid_request',
    );
    await assertTokenError(await requestToken(provider.url, { body: 'grant_type=password' }), 400, 'invalid_request');
  });

  test('answers invalid_request when the Basic header is missing or malformed', async (t) => {
    const provider = await startTestProvider(t);
    await assertTokenError(await requestToken(provider.url, { authorization: null }), 400, 'invalid_request');
    await assertTokenError(await requestToken(provider.url, { authorization: 'Bearer abc' }), 400, 'invalid_request');
    const noColon = `Basic ${Buffer.from('sandbox_client').toString('base64')}`;
    await assertTokenError(await requestToken(provider.url, { authorization: noColon }), 400, 'invalid_request');
  });

  test('answers invalid_client with 401 and a Basic challenge for an unknown client or a wrong secret', async (t) => {
    const provider = await startTestProvider(t);
    for (const authorization of [basicAuth('nobody', 'x'), basicAuth('sandbox_client', 'wrong_secret')]) {
      const response = await requestToken(provider.url, { authorization });
      assert.match(response.headers.get('www-authenticate') ?? '', /^Basic realm="obv-sandbox"/);
      await assertTokenError(response, 401, 'invalid_client');
    }
  });

  test('answers invalid_grant for the revoked client', async (t) => {
    const provider = await startTestProvider(t);
    await assertTokenError(
      await requestToken(provider.url, { authorization: basicAuth('revoked_client', 'revoked_secret') }),
      400,
      'invalid_grant',
    );
  });

  test('answers unauthorized_client for the limited client', async (t) => {
    const provider = await startTestProvider(t);
    const response = await requestToken(provider.url, { authorization: basicAuth('limited_client', 'limited_secret') });
    await assertTokenError(response, 400, 'unauthorized_client');
  });

  test('answers unsupported_grant_type for a grant_type other than client_credentials', async (t) => {
    const provider = await startTestProvider(t);
    const response = await requestToken(provider.url, {
      query: 'grant_type=authorization_code&scope=obv/token-request',
    });
    await assertTokenError(response, 400, 'unsupported_grant_type');
  });

  test('answers 503 for as many requests as the 5xx fault says, then recovers', async (t) => {
    const provider = await startTestProvider(t, { faults: { tokenFailures: { count: 2, kind: '5xx' } } });
    assert.equal((await requestToken(provider.url)).status, 503);
    assert.equal((await requestToken(provider.url)).status, 503);
    assert.equal((await requestToken(provider.url)).status, 200);
    assert.equal(provider.stats.tokenRequests, 3);
    assert.equal(provider.stats.tokensIssued, 1);
  });

  test('never answers while the timeout fault is on, so the caller times out; the fault is mutable at run time', async (t) => {
    const provider = await startTestProvider(t);
    provider.faults.tokenFailures = { count: 1, kind: 'timeout' };
    await assert.rejects(requestToken(provider.url, { signal: AbortSignal.timeout(200) }), { name: 'TimeoutError' });
    assert.equal(provider.faults.tokenFailures.count, 0);
    assert.equal((await requestToken(provider.url)).status, 200);
    assert.equal(provider.stats.tokenRequests, 2);
  });

  test('accepts the Basic scheme in any case and with several spaces (RFC 7617)', async (t) => {
    const provider = await startTestProvider(t);
    const credentials = basicAuth('sandbox_client', 'sandbox_secret').slice('Basic '.length);
    assert.equal((await requestToken(provider.url, { authorization: `basic   ${credentials}` })).status, 200);
  });

  test('answers 405 with Allow: POST to another method', async (t) => {
    const provider = await startTestProvider(t);
    const response = await fetch(`${provider.url}${TOKEN_PATH}?grant_type=client_credentials&scope=obv/token-request`);
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'POST');
    assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
  });

  test('answers 413 problem for an oversize form body', async (t) => {
    const provider = await startTestProvider(t);
    const response = await requestToken(provider.url, { body: `pad=${'x'.repeat(20_000)}` });
    assert.equal(response.status, 413);
    assert.match(response.headers.get('content-type') ?? '', /^application\/problem\+json/);
  });
});
