// Reads a request body into `req.body` as a Buffer, for the signed notification route. The common case
// (an uncompressed body with a Content-Length within the limit) is read here directly; everything else
// (compressed, chunked, over the limit, already read by the merchant's own middleware) goes to
// express.raw, so its answers (413, 415, 400) stay exactly body-parser's. express.raw cost about a
// seventh of the server's CPU per notification, mostly in machinery this case does not need.
import type { IncomingMessage } from 'node:http';
import express, { type RequestHandler } from 'express';

/** An error toProblem maps like body-parser's own (it reads `status` and `type`). */
function readError(message: string, type: string): Error {
  return Object.assign(new Error(message), { status: 400, statusCode: 400, expose: true, type });
}

/** The Content-Length when the direct path can take this request, else undefined. */
function directLength(req: IncomingMessage, limit: number): number | undefined {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return undefined;
  if (req.headers['transfer-encoding'] !== undefined || req.readableEnded || req.readableFlowing !== null) return undefined;
  const declared = req.headers['content-length'];
  if (declared === undefined || !/^\d+$/.test(declared)) return undefined;
  const length = Number(declared);
  return length > 0 && length <= limit ? length : undefined;
}

/** Any content type is read the same way; `limit` in bytes. */
export function rawBody(limit: number): RequestHandler {
  const fallback = express.raw({ type: () => true, limit });
  return (req, res, next) => {
    const length = directLength(req, limit);
    if (length === undefined) {
      fallback(req, res, next);
      return;
    }
    const chunks: Buffer[] = [];
    let received = 0;
    let done = false;
    // Listeners stay attached after the first outcome (the flag ignores the rest): a late 'error' must
    // still find a listener, or it would be thrown.
    const finish = (error?: Error): void => {
      if (done) return;
      done = true;
      if (error) {
        next(error);
        return;
      }
      req.body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received);
      next();
    };
    req.on('data', (chunk: Buffer) => {
      received += chunk.length;
      chunks.push(chunk);
    });
    // Node's parser never delivers more than Content-Length; fewer means the client went away.
    req.on('end', () => finish(received === length ? undefined : readError('request size did not match content length', 'request.size.invalid')));
    // 'close' also follows every complete body: build the error (a stack capture) only when unfinished.
    const aborted = (): void => {
      if (!done) finish(readError('request aborted', 'request.aborted'));
    };
    req.on('error', aborted);
    req.on('close', aborted);
  };
}
