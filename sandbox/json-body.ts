// JSON bodies of endpoints 2 and 4: the provider names `Content-Type: application/json`; anything else is
// a 415, a body over the limit a 413 and malformed JSON a 400 (the final error handler maps the last two).
import type { RequestHandler } from 'express';
import express from 'express';
import { HttpProblem } from './problem.ts';
import { JSON_BODY_LIMIT } from './limits.ts';

const parseJson = express.json({ limit: JSON_BODY_LIMIT, strict: true });

/** Requires and parses an `application/json` body. */
export const requireJsonBody: RequestHandler = (req, res, next) => {
  if (!req.is('application/json')) {
    throw new HttpProblem(415, 'The body must be JSON with Content-Type: application/json.');
  }
  parseJson(req, res, next);
};
