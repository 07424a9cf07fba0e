// The proxy's error vocabulary: problem(slug) takes status, title and headers from the one table, and
// toProblem maps whatever was thrown (upstream errors, body-parser errors, a store outage) to one of them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { problem, ProblemError } from '../../../proxy/common/errors.ts';
import { toProblem } from '../../../proxy/http/problem.ts';
import { SessionBackendUnavailableError } from '../../../proxy/storage/errors.ts';
import { TokenError, UpstreamHttpError, UpstreamTimeoutError } from '../../../proxy/upstream/errors.ts';

describe('problem kinds', () => {
  test('a kind carries its status, title and urn type; an empty errors list is left out of the body', () => {
    assert.deepEqual(problem('link-token-used', 'Already used.', { errors: [] }).toBody(), {
      type: 'urn:obv-link:problem:link-token-used',
      title: 'Link token already used',
      status: 409,
      detail: 'Already used.',
    });
  });

  test('extension members ride in the body beside the standard ones, which they cannot replace', () => {
    const paid = problem('order-already-paid', 'Paid once.', {
      extensions: { payment: { transactionId: 't1' }, status: 200 },
    });
    assert.deepEqual(paid.toBody(), {
      payment: { transactionId: 't1' },
      type: 'urn:obv-link:problem:order-already-paid',
      title: 'Order already paid',
      status: 409,
      detail: 'Paid once.',
    });
    assert.deepEqual(problem('payment-in-progress', 'Wait.').headers(), { 'retry-after': '1' });
  });

  test('the session-store outage says when to retry', () => {
    const outage = problem('session-store-unavailable', 'Try again.');
    assert.equal(outage.status, 503);
    assert.deepEqual(outage.headers(), { 'retry-after': '5' });
    assert.deepEqual(problem('conflict', 'x').headers(), {});
  });

  test('bad-request keeps the 4xx a library reported, under its own title', () => {
    const unreadable = problem('bad-request', 'The request could not be read.', { status: 415 });
    assert.equal(unreadable.status, 415);
    assert.equal(unreadable.title, 'Bad request');
  });

  test("a merchant's own ProblemError is answered as thrown", () => {
    const own = new ProblemError(422, 'unknown-order', 'Unknown order', 'No such order.');
    assert.equal(toProblem(own), own);
  });
});

describe('toProblem', () => {
  const cases: [string, unknown, number, string][] = [
    ['a refused token', new TokenError('POST', 'https://p/token', 'invalid_client', undefined), 502, 'upstream-auth'],
    ['an upstream time-out', new UpstreamTimeoutError('POST', 'https://p/obv'), 504, 'upstream-timeout'],
    [
      'an upstream 422',
      new UpstreamHttpError('POST', 'https://p/obv', 422, { errors: [{ path: 'a', message: 'b' }] }),
      422,
      'upstream-rejected',
    ],
    ['an upstream 503', new UpstreamHttpError('POST', 'https://p/obv', 503, undefined), 502, 'upstream-unavailable'],
    ['a store outage', new SessionBackendUnavailableError('down'), 503, 'session-store-unavailable'],
    [
      'an oversize body',
      Object.assign(new Error('too large'), { type: 'entity.too.large', status: 413, limit: 16_384 }),
      413,
      'payload-too-large',
    ],
    [
      'malformed JSON',
      Object.assign(new Error('bad'), { type: 'entity.parse.failed', status: 400 }),
      400,
      'validation',
    ],
    [
      'an unsupported encoding',
      Object.assign(new Error('br?'), { type: 'encoding.unsupported', status: 415 }),
      415,
      'bad-request',
    ],
    ['anything else', new Error('boom'), 500, 'internal'],
  ];
  for (const [what, error, status, slug] of cases) {
    test(`maps ${what} to ${status} ${slug}`, () => {
      const mapped = toProblem(error);
      assert.equal(mapped.status, status);
      assert.equal(mapped.slug, slug);
    });
  }

  test('an oversize body names the limit; upstream field errors name only fields the proxy sent, in its own words', () => {
    assert.equal(
      toProblem(Object.assign(new Error('x'), { type: 'entity.too.large', limit: 65_536 })).message,
      'The request body exceeds the limit of 65536 bytes.',
    );
    const echoed = {
      errors: [
        { path: 'transaction.amount', message: 'bad amount for acct_0123456789abcdef' },
        { path: 'acct_0123456789abcdef', message: 'x' },
      ],
    };
    assert.deepEqual(toProblem(new UpstreamHttpError('POST', 'u', 400, echoed)).errors, [
      { path: 'transaction.amount', message: 'was refused by the verification service' },
    ]);
  });
});
