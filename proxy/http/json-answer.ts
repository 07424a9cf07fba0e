// `res.json` for the proxy's sub-app (app.ts): the body goes out as one string, in the same write as the
// headers. Express's own res.json hands the text to res.send, which hashes it for an ETag and turns it into
// a Buffer whenever it hashes or the text is 1,000 bytes or more; Node then writes the headers and that
// Buffer as two chunks (a writev): on the notification route that was most of the answer's cost, with
// an ETag no POST or no-store answer can use (docs/PERFORMANCE.md, "Where a notification's time goes").
// A string body is what Node sends with its headers in one write.
import type { Response } from 'express';

/** Sends `body` as JSON (a type already set, such as problem+json, is kept, in UTF-8); as Express's, returns `res`. */
export function sendJsonInOneWrite(this: Response, body: unknown): Response {
  const text = JSON.stringify(body) ?? '';
  const type = this.get('content-type');
  this.set(
    'content-type',
    !type ? 'application/json; charset=utf-8' : /;\s*charset=/i.test(type) ? type : `${type}; charset=utf-8`,
  );
  // As Express's: a 204 or a 304 has no body and no length; HEAD gets the length and no body.
  const noBody = this.statusCode === 204 || this.statusCode === 304;
  if (!noBody) this.set('content-length', String(Buffer.byteLength(text)));
  this.end(noBody || this.req.method === 'HEAD' ? undefined : text);
  return this;
}
