// The merchant pages are served the way a careful shop would serve them: a strict CSP with no inline
// script or style, so the demo also proves the element works under one.
import type { RequestHandler } from 'express';

/**
 * The policy for a page served from `pageOrigin`. `connect-src` names the page's own WebSocket origin
 * (ws: for http, wss: for https, same host and port) rather than `ws: wss:`, which would let a script
 * open a socket to any host: `'self'` covers same-host sockets only from CSP Level 3 on. Without an
 * origin (a Host the shop does not serve), `'self'` alone. No `'unsafe-inline'` anywhere.
 */
export function contentSecurityPolicy(pageOrigin?: string): string {
  const socketOrigin = pageOrigin?.replace(/^http/, 'ws');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    `connect-src 'self'${socketOrigin ? ` ${socketOrigin}` : ''}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
    "object-src 'none'",
  ].join('; ');
}

/**
 * Sets the CSP and the usual hardening headers on the merchant's own pages and assets. `pageOrigins`
 * are the origins the shop is served under: the request's Host picks one, so a Host header the shop
 * does not know never reaches the policy.
 */
export function securityHeaders(pageOrigins: readonly string[]): RequestHandler {
  const byHost = new Map(pageOrigins.map((origin) => [new URL(origin).host, origin]));
  return (req, res, next) => {
    res.setHeader('Content-Security-Policy', contentSecurityPolicy(byHost.get(req.headers.host ?? '')));
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Referrer-Policy', 'same-origin');
    next();
  };
}
