import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import {
  TOKEN_PATH,
  TRANSACTION_PATH,
  VERIFICATION_PATH,
  accessToken,
  startTestProvider,
  startVerification,
} from './helpers.ts';

/** A raw request, so malformed paths and headers reach the server unchanged. */
function rawRequest(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body = '',
): Promise<{ status: number; type: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}${path}`, { method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? '') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('robustness', () => {
  test('answers every malformed request with a 4xx and keeps serving', async (t) => {
    const provider = await startTestProvider(t);
    const token = await accessToken(provider);
    const { verificationId } = await startVerification(provider, undefined, token);
    const json = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const cases: Array<[string, string, Record<string, string>, string]> = [
      ['POST', VERIFICATION_PATH, json, 'null'],
      ['POST', VERIFICATION_PATH, json, '"text"'],
      [
        'POST',
        VERIFICATION_PATH,
        json,
        '{"countryCode": {"$gt": ""}, "consumer": [], "merchant": 1, "transaction": null}',
      ],
      ['POST', VERIFICATION_PATH, { ...json, 'content-type': 'application/json; charset=latin9' }, '{}'],
      ['POST', VERIFICATION_PATH, { ...json, authorization: 'Bearer ' }, '{}'],
      ['POST', TRANSACTION_PATH, json, '{"__proto__": {"admin": true}}'],
      [
        'POST',
        TOKEN_PATH,
        { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic %%%' },
        'a=%ZZ',
      ],
      [
        'POST',
        `${TOKEN_PATH}?grant_type[]=x`,
        { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic Og==' },
        '',
      ],
      ['GET', '/consumer/%E0%A4%A', {}, ''],
      ['GET', `/consumer/${verificationId}?t=a&t=b`, {}, ''],
      [
        'POST',
        `/consumer/${verificationId}`,
        { 'content-type': 'application/x-www-form-urlencoded' },
        't[]=1&username=%FF',
      ],
      ['POST', `/consumer/${verificationId}`, { 'content-type': 'application/json' }, '{"t": 1}'],
      ['DELETE', '/anything', {}, ''],
    ];
    for (const [method, path, headers, body] of cases) {
      const { status } = await rawRequest(provider.url, method, path, headers, body);
      assert.ok(status >= 400 && status < 500, `${method} ${path} ${body} → ${status}`);
    }
    assert.equal((await startVerification(provider, undefined, token)).verificationId.startsWith('vrf_'), true);
  });

  test('keeps at most maxEntries verifications, forgetting the oldest first', async (t) => {
    const provider = await startTestProvider(t, { maxEntries: 2 });
    const token = await accessToken(provider);
    const oldest = await startVerification(provider, undefined, token);
    const middle = await startVerification(provider, undefined, token);
    const newest = await startVerification(provider, undefined, token);
    assert.equal(provider.state.verifications.size, 2);
    assert.equal((await fetch(oldest.consumerUrl)).status, 404);
    assert.equal((await fetch(middle.consumerUrl)).status, 200);
    assert.equal((await fetch(newest.consumerUrl)).status, 200);
  });

  test('sweeps tokens and verifications long past their lifetime', async (t) => {
    let now = Date.now();
    const provider = await startTestProvider(t, { tokenTtlSeconds: 60, consumerUrlTtlSeconds: 60, now: () => now });
    await startVerification(provider);
    provider.state.sweep();
    assert.equal(provider.state.tokens.size, 1);
    assert.equal(provider.state.verifications.size, 1);
    now += 2 * 60 * 60 * 1000;
    provider.state.sweep();
    assert.equal(provider.state.tokens.size, 0);
    assert.equal(provider.state.verifications.size, 0);
  });
});
