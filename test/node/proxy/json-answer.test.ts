// The proxy's JSON answers go out in one write with their headers (http/json-answer.ts): no second chunk
// for the body, no ETag, the same headers Express's res.json sets; a type already set is kept.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { after, before, test } from 'node:test';
import express from 'express';
import { sendJsonInOneWrite } from '../../../proxy/http/json-answer.ts';

const writes: string[] = [];
let server: http.Server;
let origin: string;

before(async () => {
  const app = express();
  app.response.json = sendJsonInOneWrite;
  app.post('/small', (_req, res) => {
    res.json({ status: 'stored' });
  });
  app.post('/large', (_req, res) => {
    res.status(201).json({ words: 'x'.repeat(5_000) });
  });
  app.post('/problem', (_req, res) => {
    res.status(409).type('application/problem+json').json({ type: 'urn:x' });
  });
  app.post('/empty', (_req, res) => {
    res.status(204).json({ ignored: true });
  });
  server = http.createServer(app);
  // Every socket write of an answer, by kind: one `write` is headers and body together; a `writev` is several chunks.
  server.on('connection', (socket: Socket) => {
    const own = socket as unknown as { _write: (...args: unknown[]) => void; _writev: (...args: unknown[]) => void };
    const [write, writev] = [own._write, own._writev];
    own._write = function (this: unknown, ...args: unknown[]) {
      writes.push('write');
      return write.apply(this, args);
    };
    own._writev = function (this: unknown, ...args: unknown[]) {
      writes.push('writev');
      return writev.apply(this, args);
    };
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function post(path: string): Promise<Response> {
  writes.length = 0;
  return fetch(`${origin}${path}`, { method: 'POST' });
}

for (const [path, status, size] of [
  ['/small', 200, 19],
  ['/large', 201, 5_012],
] as const) {
  test(`a ${size}-byte JSON answer is one write with its headers, typed and sized, without an ETag`, async () => {
    const answer = await post(path);
    assert.equal(answer.status, status);
    assert.equal(answer.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.equal(answer.headers.get('content-length'), String(size));
    assert.equal(answer.headers.get('etag'), null);
    assert.equal((await answer.text()).length, size);
    assert.deepEqual(writes, ['write']);
  });
}

test('a type already set is kept; a 204 has no body', async () => {
  const problem = await post('/problem');
  assert.equal(problem.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  assert.deepEqual(await problem.json(), { type: 'urn:x' });
  const empty = await post('/empty');
  assert.equal(empty.status, 204);
  assert.equal(await empty.text(), '');
  assert.equal(empty.headers.get('content-length'), null);
});
