// POST /verifications: the browser asks for a verification; the server adds what only it may decide
// (merchant id, product, per-session return and notification URLs, originator IP), calls endpoint 2
// and creates the session.
import { createHash } from 'node:crypto';
import express, { type Request, type Router } from 'express';
import { z } from 'zod';
import { AMOUNT_MESSAGE, AMOUNT_PATTERN } from '../../contracts/amount.ts';
import type { ProxyContext } from '../context.ts';
import { ConflictProblem, IdempotencyKeyReusedProblem, ProblemError, UnsupportedMediaTypeProblem, ValidationProblem } from '../errors.ts';
import { ID_PATTERN, newId, sessionLogRef } from '../sessions/ids.ts';
import { markerKey, sessionMarkerTtlMs } from '../sessions/markers.ts';
import { VerificationRequest } from '../upstream/verification-client.ts';
import { fieldErrors, parseOrThrow } from '../http/problem.ts';
import { startView } from '../sessions/view.ts';
import type { SessionRecord } from '../sessions/types.ts';

const text = (max: number) => z.string().trim().min(1).max(max);

/** What a page may send (CONTRACTS §2). Unknown fields are dropped. */
export const StartVerificationBody = z.object({
  merchantUserId: text(100).optional(),
  merchantTransactionId: text(100).optional(),
  amount: z.string().regex(AMOUNT_PATTERN, AMOUNT_MESSAGE).optional(),
  currency: z.string().regex(/^[A-Z]{3}$/, 'must be a 3-letter ISO 4217 code such as USD').optional(),
  language: z.string().regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language tag such as en or es-US').optional(),
  /** A link reference from an earlier verification of this merchant user, to re-verify that account. */
  linkRef: z.string().regex(ID_PATTERN, 'must be a link reference from an earlier verification').optional(),
  dataPassThrough: z.string().max(1000).optional(),
  consumer: z
    .object({
      firstName: text(100).optional(),
      lastName: text(100).optional(),
      email: z.email('must be an e-mail address').max(254).optional(),
    })
    .optional(),
});
export type StartVerificationBody = z.infer<typeof StartVerificationBody>;

/**
 * Lets the merchant's code complete the upstream request from its own session (consumer details, the
 * amount in the cart, its user id) before it is validated and sent. Return the request to send.
 * `merchant.returnURL`, `merchant.notificationURL` and `countryCode` are set again afterwards. To
 * re-verify an account the merchant keeps, set `accountToken` here (the page can never send one).
 */
export type EnrichStart = (req: Request, request: VerificationDraft) => VerificationDraft | Promise<VerificationDraft>;

/** The upstream request before validation: any field may still be missing. */
export type VerificationDraft = {
  accountToken?: string | undefined;
  countryCode: string;
  consumer: Record<string, unknown>;
  merchant: Record<string, string | undefined>;
  transaction: Record<string, string | undefined>;
};

// Field errors in the upstream request that the page could fix are named as the page knows them.
const PAGE_FIELD_NAMES: Record<string, string> = {
  'merchant.merchantUserId': 'merchantUserId',
  'merchant.merchantTransactionId': 'merchantTransactionId',
  'transaction.amount': 'amount',
  'transaction.currency': 'currency',
  'transaction.language': 'language',
  'transaction.dataPassThrough': 'dataPassThrough',
};

const IdempotencyKey = z.string().regex(/^[\x21-\x7e]{1,255}$/, 'must be 1-255 visible ASCII characters');

function hashOf(value: string): string {
  return createHash('sha256').update(value).digest('base64url');
}

/** `::ffff:1.2.3.4` → `1.2.3.4`, so the provider sees the address family it expects. */
export function clientIp(req: Request): string | undefined {
  const ip = req.ip;
  if (!ip) return undefined;
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}

export function verificationsRouter(ctx: ProxyContext): Router {
  const router = express.Router();
  const { config, store, logger } = ctx;
  const base = config.publicUrl.replace(/\/+$/, '') + config.mountPath;
  // The provider's notifications may have a listener of their own (notificationPublicUrl).
  const notificationBase = (config.notificationPublicUrl ?? config.publicUrl).replace(/\/+$/, '') + config.mountPath;

  /**
   * The accountToken behind an earlier link reference, for a re-verification. Only when the merchant's
   * server vouches for the user (enrichStart), and only for the user the reference was issued to.
   */
  async function tokenToReverify(linkRef: string, merchantUserId: string | undefined): Promise<string> {
    const refused = (detail: string) => new ProblemError(422, 'link-ref-refused', 'Cannot re-verify this account', detail,
      [{ path: 'linkRef', message: 'is not a reference this user can re-verify' }]);
    if (!ctx.enrichStart || !merchantUserId) {
      throw refused('Re-verifying by link reference needs the server to name the merchant user (set merchant.merchantUserId in the enrichStart hook).');
    }
    const sessionId = await store.readMark(markerKey.linkRef(linkRef));
    const record = sessionId === undefined ? undefined : await store.get(sessionId);
    if (record?.outcome?.status !== 'success' || record.merchantUserId !== merchantUserId) {
      logger.warn({ linkRef: sessionLogRef(linkRef) }, 'refused a re-verification: unknown link reference or another merchant user');
      throw refused('This link reference is unknown, expired or belongs to another user.');
    }
    return record.outcome.accountToken;
  }

  async function startSession(req: Request, body: StartVerificationBody) {
    const sessionId = newId();
    const notificationRef = newId();
    // The session id reads the outcome, so it never leaves browser ↔ proxy: the provider gets references.
    const returnRef = newId();
    // The return page speaks the consumer's language, like the bank's page: `?lang=` unless it is English.
    const lang = body.language && !/^en(-|$)/i.test(body.language) ? `?lang=${encodeURIComponent(body.language)}` : '';
    const returnURL = `${base}/return/${returnRef}${lang}`;
    const notificationURL = `${notificationBase}/notifications/${notificationRef}`;
    const draft: VerificationDraft = {
      countryCode: 'US',
      consumer: { ...body.consumer },
      merchant: {
        merchantId: config.merchantId,
        // A re-verification by reference takes the user only from the server (enrichStart), never the page.
        merchantUserId: body.linkRef ? undefined : body.merchantUserId,
        merchantTransactionId: body.merchantTransactionId ?? `obv-${newId()}`,
        merchantSubId: config.merchantSubId,
      },
      transaction: {
        amount: body.amount,
        currency: body.currency ?? 'USD',
        product: config.product,
        transactionRegion: config.transactionRegion,
        language: body.language,
        dataPassThrough: body.dataPassThrough,
        originatorIp: clientIp(req),
      },
    };
    const enriched = ctx.enrichStart ? await ctx.enrichStart(req, draft) : draft;
    const userId = enriched.merchant.merchantUserId;
    const reverified = body.linkRef && !enriched.accountToken ? await tokenToReverify(body.linkRef, userId) : undefined;
    const candidate = {
      ...enriched,
      ...(reverified ? { accountToken: reverified } : {}),
      countryCode: 'US',
      merchant: { ...enriched.merchant, returnURL, notificationURL },
    };
    const parsed = VerificationRequest.safeParse(candidate);
    if (!parsed.success) {
      const errors = fieldErrors(parsed.error).map((e) => ({ ...e, path: PAGE_FIELD_NAMES[e.path] ?? e.path }));
      throw new ValidationProblem(`The verification request is incomplete: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
    }
    const started = await ctx.verifications.start(parsed.data);
    const now = ctx.now();
    const { merchant, transaction } = parsed.data;
    const record: SessionRecord = {
      sessionId,
      notificationRef,
      returnRef,
      consumerUrl: started.consumerUrl,
      state: 'pending',
      createdAt: now,
      expiresAt: now + config.sessionTtlMs,
      merchantUserId: merchant.merchantUserId,
      merchantTransactionId: merchant.merchantTransactionId,
      amount: transaction.amount,
      currency: transaction.currency,
      ...(transaction.language ? { language: transaction.language } : {}),
      ...(typeof started.verificationId === 'string' && started.verificationId ? { verificationId: started.verificationId } : {}),
    };
    await store.create(record);
    await store.mark(markerKey.returnRef(returnRef), sessionId, sessionMarkerTtlMs(record, now));
    ctx.metrics.starts.inc({ result: 'started' });
    logger.info({ session: sessionLogRef(sessionId), merchantTransactionId: record.merchantTransactionId }, 'verification started');
    return record;
  }

  router.post('/verifications', ctx.rateLimiter, express.json({ limit: '16kb' }), async (req, res) => {
    if (!req.is('application/json')) throw new UnsupportedMediaTypeProblem('application/json');
    const body = parseOrThrow(StartVerificationBody, req.body, 'The request body');
    const rawKey = req.get('idempotency-key');
    if (rawKey === undefined) {
      res.status(201).json(startView(await startSession(req, body)));
      return;
    }
    const key = parseOrThrow(IdempotencyKey, rawKey, 'The Idempotency-Key header', 'Idempotency-Key');
    // Scoped to the client address so one client's key can never return another client's session, and
    // bound to the body: the key marks "this key was used", the body claim "with this body". A retry
    // with the same body returns the first session; the same key with another body is a 422.
    const scope = `${clientIp(req) ?? ''}\n${key}`;
    const keyClaim = hashOf(scope);
    const bodyClaim = hashOf(`${scope}\n${hashOf(JSON.stringify(body))}`);
    // A start that failed releases its claims; the waiting duplicate then tries to claim them itself.
    for (let attempt = 0; attempt < 3; attempt++) {
      const sameBody = await store.claimIdempotencyKey(bodyClaim, config.sessionTtlMs);
      if (!sameBody.claimed) {
        const existing = sameBody.sessionId === undefined ? undefined : await store.get(sameBody.sessionId);
        if (existing) {
          res.status(201).json(startView(existing));
          return;
        }
        continue;
      }
      const firstUse = await store.claimIdempotencyKey(keyClaim, config.sessionTtlMs);
      if (!firstUse.claimed) {
        await store.releaseIdempotencyKey(bodyClaim);
        // The key's first request failed and released it: claim again.
        if (firstUse.sessionId === undefined) continue;
        throw new IdempotencyKeyReusedProblem();
      }
      let record;
      try {
        record = await startSession(req, body);
      } catch (error) {
        await Promise.all([store.releaseIdempotencyKey(bodyClaim), store.releaseIdempotencyKey(keyClaim)]);
        throw error;
      }
      // The body claim first: a duplicate waiting on the key claim then finds the body claim complete.
      await store.completeIdempotencyKey(bodyClaim, record.sessionId, config.sessionTtlMs);
      await store.completeIdempotencyKey(keyClaim, record.sessionId, config.sessionTtlMs);
      res.status(201).json(startView(record));
      return;
    }
    throw new ConflictProblem('Another request with this Idempotency-Key is failing; retry with a new key.');
  });

  return router;
}
