// Reads the signed notification's body into `req.body` as a Buffer: the signature covers the exact
// bytes, so the body is not parsed here, and any content type is read the same way. body-parser's own
// errors (413 over the limit, 415 for an unknown encoding, 400 for an aborted request) go to the
// error handler in http/problem.ts like every other body's.
import express, { type RequestHandler } from 'express';

/** `limit` in bytes. */
export function rawBody(limit: number): RequestHandler {
  return express.raw({ type: () => true, limit });
}
