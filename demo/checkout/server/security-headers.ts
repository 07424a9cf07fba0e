// The merchant pages are served the way a careful shop would serve them: a strict CSP with no inline
// script or style, so the demo also proves the element works under one.
import type { RequestHandler } from 'express';

/**
 * `connect-src` allows `ws:`/`wss:` because the element's WebSocket URL is same-host but a different
 * scheme, which `'self'` only covers from CSP Level 3 on. No `'unsafe-inline'` anywhere.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self' ws: wss:",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "object-src 'none'",
].join('; ');

/** Sets the CSP and the usual hardening headers on the merchant's own pages and assets. */
export const securityHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'same-origin');
  next();
};
