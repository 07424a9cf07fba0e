// The merchant server's keys (OBV_MERCHANT_API_KEYS, or the one OBV_MERCHANT_API_KEY) on the server-only
// routes: /link-sessions, /transactions, /links, /events. Every key is compared, each in constant time; the
// id of the one that matched is logged and counted (`obv_merchant_api_requests_total{key_id}`), so an
// operator sees when an old key is no longer used; the key itself never is.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, RequestHandler } from 'express';
import { rateLimit, type Store } from 'express-rate-limit';
import type { Logger } from 'pino';
import { problem } from '../common/errors.ts';
import { clip, WarningLimiter } from '../common/log-limits.ts';
import { AUTH_FAILURE_WINDOW_MS } from '../config/limits.ts';
import type { MerchantApiKey } from '../config/merchant-api-keys.ts';
import type { ProxyMetrics } from '../common/metrics.ts';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/**
 * The id of the key the request's bearer is, or undefined. Hashing first makes the lengths equal, so
 * length does not leak; every key is compared, whichever matched, so timing does not tell which one.
 */
function matchingKeyId(req: Request, keys: readonly { id: string; digest: Buffer }[]): string | undefined {
  const match = /^Bearer (.+)$/.exec(req.get('authorization') ?? '');
  const given = digest(match?.[1] ?? '');
  let found: string | undefined;
  for (const key of keys) {
    if (timingSafeEqual(given, key.digest) && found === undefined) found = key.id;
  }
  return match?.[1] ? found : undefined;
}

export interface MerchantAuthOptions {
  apiKeys: readonly MerchantApiKey[];
  /** Counts the requests each key let through, by id. */
  metrics: ProxyMetrics;
  /** Refused keys per client address per window before they are answered 429; 0 = no limit. */
  failureLimit: number;
  /** Where the refusals are counted (Redis: shared by every instance); default in memory. */
  store?: Store;
  logger: Logger;
}

/**
 * Counts refused keys per client address; past the limit, a wrong key from that address is answered
 * 429 instead of 401. Only wrong keys reach it, so it can never refuse or count the merchant's own
 * requests, however many run at once and however slow the provider is, nor can ten wrong keys from a
 * shared address (a NAT, a balancer) stop the merchant's payments. It does not stop guessing (a locked
 * address still learns a right guess): the key's length does (schema.ts); this slows and reports it.
 */
function failedKeyLimit(options: MerchantAuthOptions): RequestHandler {
  const { failureLimit, store, logger } = options;
  const refuse: RequestHandler = (req, _res, next) =>
    next(
      problem(
        'unauthorized',
        `${req.method} ${req.baseUrl}${req.path.split('/').slice(0, 2).join('/')} needs Authorization: Bearer <OBV_MERCHANT_API_KEY>.`,
      ),
    );
  if (failureLimit === 0) return refuse;
  const warnings = new WarningLimiter(logger);
  const counter = rateLimit({
    windowMs: AUTH_FAILURE_WINDOW_MS,
    limit: failureLimit,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    ...(store ? { store } : {}),
    handler: (req, _res, next) => {
      warnings.once(
        `locked:${req.ip ?? ''}`,
        { address: clip(req.ip ?? '') },
        'an address passed the failed API-key limit: its wrong keys are answered 429 (the right key still passes)',
      );
      next(problem('rate-limited', 'Too many failed API-key attempts from this address; try again later.'));
    },
  });
  return (req, res, next) => {
    void counter(req, res, (error?: unknown) => (error === undefined ? refuse(req, res, next) : next(error)));
  };
}

/**
 * The guard of every server-only route, built once so /transactions and /links share one failed-key
 * budget. The key is checked first: a request with the right key passes without touching the limit.
 */
export function merchantAuth(options: MerchantAuthOptions): RequestHandler[] {
  const keys = options.apiKeys.map(({ id, key }) => ({ id, digest: digest(key) }));
  const { metrics, logger } = options;
  // Every configured id shows from the start, at 0: a key nobody uses any more reads 0, not "absent".
  for (const { id } of keys) metrics.merchantApiRequests.inc({ key_id: id }, 0);
  const onWrongKey = failedKeyLimit(options);
  return [
    (req, res, next) => {
      const keyId = matchingKeyId(req, keys);
      if (keyId === undefined) {
        onWrongKey(req, res, next);
        return;
      }
      res.locals.merchantKeyId = keyId;
      metrics.merchantApiRequests.inc({ key_id: keyId });
      // The route's first segment only: a link reference in the path is a credential of its own.
      logger.info(
        { keyId, method: req.method, route: `${req.baseUrl}${req.path.split('/').slice(0, 2).join('/')}` },
        'merchant API request',
      );
      next();
    },
  ];
}
