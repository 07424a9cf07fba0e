// rawBody: whatever the framing (Content-Length, chunked, gzip) and content type, the route gets the
// exact bytes; oversize bodies get body-parser's errors, and a client that goes away is survived.
import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import express from 'express';
import { rawBody } from '../../../proxy/http/raw-body.ts';

const LIMIT = 64;

describe('rawBody', () => {
  let server: http.Server;
  let port: number;
  const errors: string[] = [];

  before(async () => {
    const app = express();
    app.post('/echo', rawBody(LIMIT), (req, res) => {
      res.json({
        isBuffer: Buffer.isBuffer(req.body),
        text: Buffer.isBuffer(req.body) ? req.body.toString('utf8') : null,
      });
    });
    app.use(
      (
        error: { type?: string; status?: number },
        _req: express.Request,
        res: express.Response,
        _next: express.NextFunction,
      ) => {
        errors.push(String(error.type));
        res.status(error.status ?? 500).json({ type: error.type });
      },
    );
    server = http.createServer(app);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    port = (server.address() as AddressInfo).port;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  /** One request through node:http so the framing (length, chunked, encoding) is ours to choose. */
  function post(
    body: Buffer,
    headers: Record<string, string>,
    chunked = false,
  ): Promise<{ status: number; json: Record<string, unknown> }> {
    return new Promise((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port,
          path: '/echo',
          method: 'POST',
          headers: chunked ? headers : { ...headers, 'content-length': String(body.length) },
        },
        (response) => {
          let text = '';
          response.setEncoding('utf8');
          response.on('data', (chunk: string) => (text += chunk));
          response.on('end', () =>
            resolve({ status: response.statusCode ?? 0, json: JSON.parse(text) as Record<string, unknown> }),
          );
        },
      );
      request.on('error', reject);
      if (chunked) {
        request.write(body.subarray(0, 3));
        request.end(body.subarray(3));
      } else {
        request.end(body);
      }
    });
  }

  test('reads a body sent with a Content-Length as the exact bytes, whatever its content type', async () => {
    const response = await post(Buffer.from('{"a":"caf\u00e9"}'), { 'content-type': 'text/plain' });
    assert.equal(response.status, 200);
    assert.deepEqual(response.json, { isBuffer: true, text: '{"a":"caf\u00e9"}' });
  });

  test('reads a chunked body the same way (express.raw)', async () => {
    const response = await post(Buffer.from('{"chunked":true}'), { 'content-type': 'application/json' }, true);
    assert.deepEqual(response.json, { isBuffer: true, text: '{"chunked":true}' });
  });

  test('inflates a gzip body the same way (express.raw)', async () => {
    const response = await post(gzipSync('{"zipped":1}'), { 'content-encoding': 'gzip' });
    assert.deepEqual(response.json, { isBuffer: true, text: '{"zipped":1}' });
  });

  test("refuses a body over the limit with body-parser's 413 error", async () => {
    const response = await post(Buffer.alloc(LIMIT + 1, 'a'), {});
    assert.equal(response.status, 413);
    assert.equal(response.json.type, 'entity.too.large');
  });

  test('takes a body exactly at the limit', async () => {
    const response = await post(Buffer.alloc(LIMIT, 'b'), {});
    assert.equal(response.status, 200);
    assert.equal(response.json.text, 'b'.repeat(LIMIT));
  });

  test('survives a client that sends less than its Content-Length and disconnects', async () => {
    const before = errors.length;
    const socket = net.connect(port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write('POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 40\r\n\r\n{"only":"part');
    await new Promise((resolve) => setTimeout(resolve, 50));
    socket.destroy();
    for (let waited = 0; errors.length === before && waited < 2_000; waited += 20)
      await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(errors.at(-1), 'request.aborted');
    // The server still answers afterwards.
    assert.equal((await post(Buffer.from('ok'), {})).status, 200);
  });
});
