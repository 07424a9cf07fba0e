// The logger's redaction walk against pino's own `redact` with REDACT_PATHS (what it replaced): every
// line must come out the same, and the object a caller logged must come back unchanged.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import pino from 'pino';
import { createLogger, REDACT_PATHS, redactSecrets, safeError } from '../../../proxy/common/logger.ts';

function capture(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const { time: _time, ...line } = JSON.parse(chunk.toString()) as Record<string, unknown>;
      lines.push(line);
      done();
    },
  });
  return { stream, lines };
}

/** The logger as it was: pino's path redaction and the same error serialiser. */
function referenceLogger(stream: Writable): pino.Logger {
  const serializeError = (value: unknown) => (value instanceof Error ? safeError(value) : value);
  return pino(
    {
      name: 'obv-proxy',
      level: 'debug',
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      serializers: { err: serializeError, error: serializeError },
    },
    stream,
  );
}

const OBJECTS: Record<string, unknown>[] = [
  { session: 'abc123', webhookId: 'msg_1', outcome: 'success' },
  { token: 'tok-top', accountToken: 'acct-top', other: 1 },
  { req: { headers: { authorization: 'Bearer b-2', accept: 'json' }, clientSecret: 'cs-1' } },
  { a: { b: { secret: 's-2', c: { password: 'too-deep-for-either' } } } },
  { list: [{ token: 't-in-array' }, 'x'], nested: [[{ access_token: 'at-3' }]] },
  { config: { webhookSecret: 'whsec_x', merchantApiKey: 'mk', Authorization: 'Basic q' } },
  { err: Object.assign(new Error('boom'), { code: 'E1', options: { headers: { authorization: 'Bearer in-error' } } }) },
  { error: { token: 'plain-object-error' }, status: 500 },
  { failure: Object.assign(new Error('other key'), { token: 'own-token' }) },
  { empty: {}, nil: null, flag: false, when: new Date(0) },
];

describe('log redaction', () => {
  for (const [index, object] of OBJECTS.entries()) {
    test(`writes line ${index} exactly as pino's path redaction did`, () => {
      const ours = capture();
      const theirs = capture();
      createLogger('debug', ours.stream).info(object, 'line');
      referenceLogger(theirs.stream).info(object, 'line');
      assert.deepEqual(ours.lines, theirs.lines);
    });
  }

  test('redacts child bindings as pino did', () => {
    const ours = capture();
    const theirs = capture();
    createLogger('debug', ours.stream)
      .child({ token: 'bound', meta: { clientSecret: 'bound-2' } })
      .info({ x: 1 }, 'child');
    referenceLogger(theirs.stream)
      .child({ token: 'bound', meta: { clientSecret: 'bound-2' } })
      .info({ x: 1 }, 'child');
    assert.deepEqual(ours.lines, theirs.lines);
    assert.ok(!JSON.stringify(ours.lines).includes('bound'));
  });

  test('redacts the bindings of a grandchild and of setBindings', () => {
    const ours = capture();
    const grandchild = createLogger('debug', ours.stream).child({ a: 1 }).child({ password: 'pw-1' });
    grandchild.setBindings({ token: 'set-later' });
    grandchild.info('grandchild');
    const line = JSON.stringify(ours.lines);
    assert.match(line, /grandchild/);
    assert.ok(!line.includes('pw-1') && !line.includes('set-later'), line);
  });

  test('logs an Error passed alone through the safe serialiser', () => {
    const ours = capture();
    const error = Object.assign(new Error('alone'), { options: { json: { accountToken: 'acct-in-options' } } });
    createLogger('debug', ours.stream).error(error);
    const line = JSON.stringify(ours.lines);
    assert.match(line, /alone/);
    assert.ok(!line.includes('acct-in-options'));
  });

  test('leaves the logged object unchanged and returns it as is when nothing is secret', () => {
    const object = { req: { headers: { authorization: 'Bearer keep' } }, plain: { a: 1 } };
    const redacted = redactSecrets(object) as typeof object;
    assert.equal(object.req.headers.authorization, 'Bearer keep');
    assert.equal(redacted.req.headers.authorization, '[redacted]');
    assert.equal(redacted.plain, object.plain);
    const clean = { a: { b: 1 } };
    assert.equal(redactSecrets(clean), clean);
  });
});
