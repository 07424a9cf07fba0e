import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  VERIFICATION_PATH,
  accessToken,
  postJson,
  readProblem,
  startTestProvider,
  startVerification,
  verificationBody,
} from './helpers.ts';

describe('verification endpoint (endpoint 2)', () => {
  test('answers with a consumerUrl on the host the request was sent to, and a verificationId', async (t) => {
    const provider = await startTestProvider(t);
    const response = await postJson(
      `${provider.url}${VERIFICATION_PATH}`,
      await accessToken(provider),
      verificationBody(),
    );
    assert.equal(response.status, 200);
    const body = (await response.json()) as { consumerUrl: string; verificationId: string };
    const consumerUrl = new URL(body.consumerUrl);
    assert.equal(consumerUrl.origin, provider.url);
    assert.equal(consumerUrl.pathname, `/consumer/${body.verificationId}`);
    assert.ok((consumerUrl.searchParams.get('t') ?? '').length >= 20);
    assert.equal(provider.stats.verificationRequests, 1);
  });

  test('builds the consumerUrl from the publicUrl option when one is given', async (t) => {
    const provider = await startTestProvider(t, { publicUrl: 'https://bank.example.test/' });
    const { consumerUrl } = await startVerification(provider);
    assert.match(consumerUrl, /^https:\/\/bank\.example\.test\/consumer\/vrf_[\w-]+\?t=[\w-]+$/);
  });

  describe('bearer authentication', () => {
    async function assertInvalidToken(response: Response): Promise<void> {
      assert.equal(response.status, 401);
      // RFC 6750 §3: error_description is printable ASCII without '"' and '\'.
      assert.match(
        response.headers.get('www-authenticate') ?? '',
        /^Bearer realm="obv-sandbox", error="invalid_token", error_description="[\x20\x21\x23-\x5B\x5D-\x7E]+"$/,
      );
      const problem = await readProblem(response);
      assert.equal(problem.status, 401);
    }

    test('accepts the Bearer scheme in any case and with several spaces (RFC 6750)', async (t) => {
      const provider = await startTestProvider(t);
      const response = await postJson(`${provider.url}${VERIFICATION_PATH}`, null, verificationBody(), {
        authorization: `bearer   ${await accessToken(provider)}`,
      });
      assert.equal(response.status, 200);
    });

    test('answers 401 invalid_token without a bearer token', async (t) => {
      const provider = await startTestProvider(t);
      await assertInvalidToken(await postJson(`${provider.url}${VERIFICATION_PATH}`, null, verificationBody()));
    });

    test('answers 401 invalid_token for a token it never issued', async (t) => {
      const provider = await startTestProvider(t);
      await assertInvalidToken(
        await postJson(`${provider.url}${VERIFICATION_PATH}`, 'not-a-token', verificationBody()),
      );
    });

    test('answers 401 invalid_token once the token outlived expires_in', async (t) => {
      let now = Date.parse('2026-01-01T00:00:00Z');
      const provider = await startTestProvider(t, { tokenTtlSeconds: 5, now: () => now });
      const token = await accessToken(provider);
      now += 4_000;
      assert.equal((await postJson(`${provider.url}${VERIFICATION_PATH}`, token, verificationBody())).status, 200);
      now += 1_000;
      const response = await postJson(`${provider.url}${VERIFICATION_PATH}`, token, verificationBody());
      await assertInvalidToken(response);
    });

    test('answers 401 invalid_token after expireTokens() and after revokeToken()', async (t) => {
      const provider = await startTestProvider(t);
      const expired = await accessToken(provider);
      provider.expireTokens();
      await assertInvalidToken(await postJson(`${provider.url}${VERIFICATION_PATH}`, expired, verificationBody()));
      const revoked = await accessToken(provider);
      provider.revokeToken(revoked);
      await assertInvalidToken(await postJson(`${provider.url}${VERIFICATION_PATH}`, revoked, verificationBody()));
    });
  });

  describe('request validation', () => {
    test('answers 400 naming every missing top-level field', async (t) => {
      const provider = await startTestProvider(t);
      const response = await postJson(`${provider.url}${VERIFICATION_PATH}`, await accessToken(provider), {});
      assert.equal(response.status, 400);
      const paths = (await readProblem(response)).errors?.map((error) => error.path).sort();
      assert.deepEqual(paths, ['consumer', 'countryCode', 'merchant', 'transaction']);
    });

    test('answers 400 naming each bad inner field by its path', async (t) => {
      const provider = await startTestProvider(t);
      const body = verificationBody({ returnURL: 'javascript:alert(1)', merchantUserId: '' });
      (body.transaction as Record<string, unknown>).amount = '12,50';
      (body.consumer as Record<string, unknown>).email = 'not-an-email';
      const response = await postJson(`${provider.url}${VERIFICATION_PATH}`, await accessToken(provider), body);
      assert.equal(response.status, 400);
      const problem = await readProblem(response);
      const paths = problem.errors?.map((error) => error.path).sort();
      assert.deepEqual(paths, [
        'consumer.email',
        'merchant.merchantUserId',
        'merchant.returnURL',
        'transaction.amount',
      ]);
      assert.match(problem.detail, /transaction\.amount/);
    });

    test('answers 400 for a countryCode that is not 2 characters', async (t) => {
      const provider = await startTestProvider(t);
      const body = verificationBody({}, { countryCode: 'USA' });
      const response = await postJson(`${provider.url}${VERIFICATION_PATH}`, await accessToken(provider), body);
      assert.equal(response.status, 400);
      assert.deepEqual(
        (await readProblem(response)).errors?.map((error) => error.path),
        ['countryCode'],
      );
    });

    test('answers 422 naming countryCode for a country other than US', async (t) => {
      const provider = await startTestProvider(t);
      const body = verificationBody({}, { countryCode: 'CA' });
      const response = await postJson(`${provider.url}${VERIFICATION_PATH}`, await accessToken(provider), body);
      assert.equal(response.status, 422);
      assert.deepEqual(
        (await readProblem(response)).errors?.map((error) => error.path),
        ['countryCode'],
      );
    });

    test('answers 422 naming accountToken for an accountToken it never issued', async (t) => {
      const provider = await startTestProvider(t);
      const body = verificationBody({}, { accountToken: 'acct_unknown' });
      const response = await postJson(`${provider.url}${VERIFICATION_PATH}`, await accessToken(provider), body);
      assert.equal(response.status, 422);
      assert.deepEqual(
        (await readProblem(response)).errors?.map((error) => error.path),
        ['accountToken'],
      );
    });

    test('answers 422 naming merchant.notificationURL when neither the request nor the options give one', async (t) => {
      const provider = await startTestProvider(t, { defaultNotificationURL: undefined });
      const response = await postJson(
        `${provider.url}${VERIFICATION_PATH}`,
        await accessToken(provider),
        verificationBody(),
      );
      assert.equal(response.status, 422);
      assert.deepEqual(
        (await readProblem(response)).errors?.map((error) => error.path),
        ['merchant.notificationURL'],
      );
    });

    test('answers 415 for a body that is not JSON, 400 for malformed JSON and 413 for an oversize body', async (t) => {
      const provider = await startTestProvider(t);
      const token = await accessToken(provider);
      const url = `${provider.url}${VERIFICATION_PATH}`;
      const formBody = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-www-form-urlencoded' },
        body: 'countryCode=US',
      });
      assert.equal((await readProblem(formBody)).status, 415);
      assert.equal((await readProblem(await postJson(url, token, '{"countryCode": '))).status, 400);
      assert.equal((await readProblem(await postJson(url, token, { pad: 'x'.repeat(100_000) }))).status, 413);
      assert.equal((await readProblem(await postJson(url, token, '[1, 2]'))).status, 400);
    });
  });

  test('answers 404 problem for an unknown route and keeps serving', async (t) => {
    const provider = await startTestProvider(t);
    const response = await fetch(`${provider.url}/exp/ext/mint/ooes/v2/obv`, { method: 'POST' });
    assert.equal(response.status, 404);
    assert.equal((await readProblem(response)).status, 404);
    assert.equal((await startVerification(provider)).verificationId.startsWith('vrf_'), true);
  });
});
