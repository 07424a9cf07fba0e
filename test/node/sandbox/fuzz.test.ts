// A bounded, seeded fuzz of every route: 300 random or malformed requests (odd JSON, wrong types, huge
// strings under the body limits, bad headers, unusual methods, path traversal, unicode). Each must get
// a non-5xx answer, nothing may reach the error log, and the sandbox must still serve a full flow after.
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { describe, test } from 'node:test';
import type { ProviderLogger } from '../../../sandbox/index.ts';
import { seededRandom } from '../../helpers/prng.ts';
import {
  TOKEN_PATH,
  TRANSACTION_PATH,
  VERIFICATION_PATH,
  accessToken,
  basicAuth,
  startTestProvider,
  startVerification,
  submitConsumerForm,
  verificationBody,
} from './helpers.ts';

const REQUESTS = 300;
const BATCH = 10;
const SEED = 0x0b7_11e;

interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: string;
}

/** Sends `req` byte for byte (no client-side normalisation); resolves with the status, 0 on a reset. */
function send(baseUrl: string, req: RawRequest): Promise<number> {
  return new Promise((resolve, reject) => {
    // An explicit Content-Length: Node sends GET/DELETE/TRACE bodies unframed otherwise, which the server
    // would then read as a second, garbled request.
    const headers = { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) };
    const outgoing = request(`${baseUrl}${req.path}`, { method: req.method, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', reject);
    });
    outgoing.on('error', (error) =>
      reject(
        new Error(
          `${req.method} ${req.path.slice(0, 80)} ${JSON.stringify(req.headers).slice(0, 300)} ${req.body.slice(0, 80)}: ${error.message}`,
        ),
      ),
    );
    outgoing.end(req.body);
  });
}

const UNICODE = ['é', 'ß', 'Ω', '中文', '🏦', '\u202e', '\u0000', '\ud800', '\ufeff', '𝔘𝔖', 'ﷺ'];
const METHODS = [
  'GET',
  'POST',
  'POST',
  'POST',
  'POST',
  'POST',
  'POST',
  'PUT',
  'PATCH',
  'DELETE',
  'OPTIONS',
  'HEAD',
  'PROPFIND',
  'TRACE',
];

describe('fuzzing every route', () => {
  test(`answers ${REQUESTS} random and malformed requests without a 5xx and keeps serving`, async (t) => {
    const errors: unknown[] = [];
    const logger: ProviderLogger = { info: () => {}, warn: () => {}, error: (fields) => errors.push(fields) };
    const provider = await startTestProvider(t, { logger, notificationRetryDelaysMs: [], notificationTimeoutMs: 50 });
    const token = await accessToken(provider);
    const verifications = await Promise.all(
      Array.from({ length: 8 }, () => startVerification(provider, undefined, token)),
    );
    const random = seededRandom(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const int = (max: number) => Math.floor(random() * max);

    const weirdString = (): string => {
      switch (int(7)) {
        case 0:
          return '';
        case 1:
          return 'x'.repeat(20_000 + int(8_000)); // near, but under, the 32 kB JSON limit
        case 2:
          return Array.from({ length: 1 + int(40) }, () => pick(UNICODE)).join('');
        case 3:
          return '../../../../etc/passwd';
        case 4:
          return '<script>alert(1)</script>"\'';
        case 5:
          return ' '.repeat(1 + int(50));
        default:
          return `v${int(1_000_000)}`;
      }
    };
    const weirdValue = (depth = 0): unknown => {
      switch (int(depth > 3 ? 6 : 9)) {
        case 0:
          return null;
        case 1:
          return int(2) === 0;
        case 2:
          return pick([0, -1, 1e308, -0, 3.14, Number.MAX_SAFE_INTEGER + 2]);
        case 3:
        case 4:
        case 5:
          return weirdString();
        case 6:
          return Array.from({ length: int(4) }, () => weirdValue(depth + 1));
        case 7:
          return Object.fromEntries(
            Array.from({ length: int(4) }, () => [
              pick(['__proto__', 'constructor', 'a', weirdString().slice(0, 20)]),
              weirdValue(depth + 1),
            ]),
          );
        default:
          return { toString: weirdString(), valueOf: weirdValue(depth + 1) };
      }
    };
    /** A valid body with one field, at any depth, replaced by something odd (so requests get past the outer checks). */
    const mutated = (body: Record<string, unknown>): Record<string, unknown> => {
      const copy = structuredClone(body);
      let target: Record<string, unknown> = copy;
      for (let hops = int(3); hops > 0; hops -= 1) {
        const objects = Object.values(target).filter(
          (value): value is Record<string, unknown> => typeof value === 'object' && value !== null,
        );
        if (objects.length === 0) break;
        target = pick(objects);
      }
      const keys = Object.keys(target);
      const key = int(4) === 0 || keys.length === 0 ? weirdString().slice(0, 30) : pick(keys);
      if (int(5) === 0) delete target[key];
      else target[key] = weirdValue();
      return copy;
    };
    const jsonBody = (valid: () => Record<string, unknown>): string => {
      switch (int(8)) {
        case 0:
          return '{"countryCode": "US",';
        case 1:
          return JSON.stringify(weirdValue());
        case 2:
          return '['.repeat(5_000) + ']'.repeat(5_000);
        case 3:
          return `{"a":${'{"a":'.repeat(2_000)}1${'}'.repeat(2_001)}`;
        case 4:
          return '\ufeff{}';
        default:
          return JSON.stringify(mutated(valid()));
      }
    };
    const formBody = (fields: Record<string, string>): string => {
      const params = new URLSearchParams(fields);
      if (int(3) === 0) params.set(pick(Object.keys(fields)), weirdString().slice(0, 3_000));
      if (int(4) === 0) params.append(pick(['t', 'username', 'grant_type', 'scope', 'action', 't[]']), pick(UNICODE));
      return int(6) === 0 ? `${params.toString()}&%ZZ=%E0%A4%A&=&&` : params.toString();
    };
    const contentType = (usual: string): string =>
      pick([
        usual,
        usual,
        usual,
        `${usual}; charset=utf-8`,
        `${usual}; charset=latin9`,
        'text/plain',
        'application/json',
        'multipart/form-data; boundary=x',
        '',
        'a/b/c; ;;',
      ]);
    /** Half the time the right credentials for the route, so requests also get past authentication. */
    const authorization = (target: string): string | undefined => {
      if (int(2) === 0)
        return target.startsWith(TOKEN_PATH) ? basicAuth('sandbox_client', 'sandbox_secret') : `Bearer ${token}`;
      return pick([
        `Bearer ${token}`,
        `Bearer ${token}`,
        `bearer  ${token} `,
        basicAuth('sandbox_client', 'sandbox_secret'),
        basicAuth('sandbox_client', weirdString().slice(0, 200)),
        `Basic ${Buffer.from(pick(UNICODE).repeat(10)).toString('base64')}`,
        'Basic ===',
        `Bearer ${'A'.repeat(7_000)}`,
        'Digest username="x"',
        undefined,
      ]);
    };
    /** Percent-encodes every UTF-8 byte (lone surrogates included, which encodeURIComponent refuses). */
    const pct = (text: string) =>
      [...Buffer.from(text)].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');
    const path = (): string => {
      const { verificationId, consumerUrl } = pick(verifications);
      const t = new URL(consumerUrl).searchParams.get('t') ?? '';
      return pick([
        TOKEN_PATH,
        `${TOKEN_PATH}?grant_type=client_credentials&scope=obv/token-request`,
        `${TOKEN_PATH}?grant_type=${pct(weirdString().slice(0, 500))}&scope=obv/token-request&scope=x`,
        VERIFICATION_PATH,
        `${VERIFICATION_PATH}/`,
        TRANSACTION_PATH,
        `/consumer/${verificationId}?t=${t}`,
        `/consumer/${verificationId}?t=${t}&t=${t}`,
        `/consumer/${pct(weirdString().slice(0, 300))}?t=${pct(pick(UNICODE))}`,
        '/consumer/..%2f..%2f..%2fetc%2fpasswd',
        '/consumer/%E0%A4%A',
        '/consumer/%00',
        '/consumer-assets/bank.css',
        '/consumer-assets/..%2f..%2fpackage.json',
        '/../../../../etc/passwd',
        `/exp/${pct(pick(UNICODE))}/${'a/'.repeat(int(200))}`,
        `/?${'a=1&'.repeat(int(500))}`,
        '//exp//auth//mint',
      ]);
    };
    const nextRequest = (): RawRequest => {
      const target = path();
      const headers: Record<string, string> = {};
      let body = '';
      if (target.startsWith(TOKEN_PATH)) {
        headers['content-type'] = contentType('application/x-www-form-urlencoded');
        body = int(2) === 0 ? '' : formBody({ grant_type: 'client_credentials', scope: 'obv/token-request' });
      } else if (target.startsWith('/consumer/')) {
        headers['content-type'] = contentType('application/x-www-form-urlencoded');
        const t = new URL(target, 'http://x').searchParams.get('t') ?? '';
        body = formBody({
          t,
          username: pick(['user_good', 'user_bad', 'user_locked', weirdString().slice(0, 100)]),
          password: pick(['pass_good', 'nope', '']),
          action: pick(['signin', 'cancel', 'delete', '']),
        });
      } else {
        headers['content-type'] = contentType('application/json');
        const valid = target.startsWith(TRANSACTION_PATH)
          ? () => ({
              accountToken: 'acct_x',
              merchant: { merchantId: 'm', merchantTransactionId: 'o' },
              originatorIp: '203.0.113.7',
            })
          : () => verificationBody({ returnURL: 'http://127.0.0.1:9/r' });
        body = jsonBody(valid);
      }
      const auth = authorization(target);
      if (auth !== undefined) headers.authorization = auth;
      if (int(2) === 0)
        Object.assign(headers, {
          'x-pgw-app-id': pick(['sandbox-app', ' ', 'é'.repeat(300)]),
          'x-pgw-client-id': 'sandbox_client',
        });
      if (int(10) === 0) headers.host = pick(['', 'a b', 'evil.example:99999', '[::1', 'bank.example@127.0.0.1']);
      if (int(12) === 0) headers['content-encoding'] = pick(['gzip', 'br', 'identity', 'x-unknown']);
      if (headers['content-type'] === '') delete headers['content-type'];
      return { method: pick(METHODS), path: target, headers, body };
    };

    for (let sent = 0; sent < REQUESTS; sent += BATCH) {
      const batch = Array.from({ length: BATCH }, (_, i) => ({ index: sent + i, req: nextRequest() }));
      const statuses = await Promise.all(batch.map(({ req }) => send(provider.url, req)));
      statuses.forEach((status, i) => {
        const { index, req } = batch[i] as { index: number; req: RawRequest };
        const shown = `#${index} (seed ${SEED}): ${req.method} ${req.path.slice(0, 120)} ${JSON.stringify(req.headers).slice(0, 200)} ${req.body.slice(0, 120)}`;
        assert.ok(status >= 200 && status < 500, `${shown} → ${status}`);
      });
    }
    assert.deepEqual(errors, [], 'nothing reached the error log');

    // Still serving: a fresh token, a fresh verification and a completed sign-in.
    const { consumerUrl } = await startVerification(provider);
    assert.equal((await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'pass_good' })).status, 303);
  });
});
