// Which browser origins may use the proxy: the proxy's own public origin and OBV_ALLOWED_ORIGINS, and
// nothing else. The request's Host header is never part of the decision: after a DNS rebinding, a
// hostile page's requests carry a Host the attacker chose, so "Origin equals Host" proves nothing.
// Shared by the HTTP CORS middleware and the WebSocket upgrade check so both enforce the same list.
// This protects browsers from other sites' pages; it is no proof of who calls: a script sends any
// Origin it likes, so nothing security relevant (the bank step's binding included) rests on it.
import type { Logger } from 'pino';
import { clip, WarningLimiter } from '../common/log-limits.ts';

export interface OriginPolicy {
  /** True when a browser on `origin` may call us. */
  allows(origin: string): boolean;
  /**
   * `allows`, and on a refusal a warning naming OBV_ALLOWED_ORIGINS: once per origin (a page that is
   * simply missing from the list shows up in the log without a flood of lines), the origin truncated.
   */
  check(origin: string, where: 'http' | 'websocket'): boolean;
}

export function createOriginPolicy(publicUrl: string, allowedOrigins: readonly string[], logger: Logger): OriginPolicy {
  const allowed = new Set([new URL(publicUrl).origin, ...allowedOrigins]);
  const warnings = new WarningLimiter(logger);
  const allows = (origin: string) => allowed.has(origin);
  return {
    allows,
    check(origin, where) {
      if (allows(origin)) return true;
      warnings.once(
        origin,
        { origin: clip(origin), where },
        'refused a request from an origin that is not allowed; add it to OBV_ALLOWED_ORIGINS if it is your page',
      );
      return false;
    },
  };
}
