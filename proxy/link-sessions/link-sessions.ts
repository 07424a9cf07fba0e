// Link sessions: the merchant's server says, server to server, who is paying for what (user, order,
// amount, consumer, language, the user's saved accounts), and gets an opaque, short-lived link token for
// the page (or a hosted page: hosted.ts). A start made with
// the token uses these values alone (verifications/start.ts). The token is for one purchase: it starts
// verifications (a retry after a failure, a "Change" of account) until its order is paid, then nothing
// more. Only a hash of the token is stored, so nothing read out of the store (a Redis dump, a key
// listing) can start a verification.
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config/schema.ts';
import { problem, ProblemError } from '../common/errors.ts';
import { MAX_USES_PER_LINK_SESSION, RECORD_GRACE_MS } from '../config/limits.ts';
import { Amount, CurrencyCode, LanguageTag, text, validationProblem } from '../common/validation.ts';
import type { SavedAccounts } from '../accounts/accounts.ts';
import { SavedAccountFields, StoredSavedAccountFields, type OfferView } from '../accounts/offer.ts';
import type { LinkSessionStore } from '../storage/link-sessions.ts';
import type { Sealer } from '../sealing/sealer.ts';
import type { PaymentStore } from '../storage/payments.ts';
import {
  checkCompletionUri,
  completionRedirect,
  HOSTED_REF_PATTERN,
  HOSTED_STATUSES,
  HostedRequest,
  hostedUrl,
  linkTokenOfHostedRef,
  newHostedRef,
  type HostedStatus,
} from './hosted.ts';

/** What the merchant's server sends to POST /link-sessions (CONTRACTS §3). Unknown fields are refused. */
export const CreateLinkSessionBody = z.strictObject({
  merchantUserId: text(100),
  merchantTransactionId: text(100),
  amount: Amount,
  currency: CurrencyCode,
  consumer: z.strictObject({
    firstName: text(100),
    lastName: text(100),
    email: z.email('must be an e-mail address').max(254),
  }),
  /** The shopper's language: the bank's page, the return page and the shopper words follow it. */
  language: LanguageTag.max(35).optional(),
  dataPassThrough: z.string().max(1000).optional(),
  /** Returning shoppers (accounts/offer.ts): saved accounts to offer, saving allowed, an account to re-authorize. */
  ...SavedAccountFields,
  /** A hosted page for this link session (link-sessions/hosted.ts): the answer then carries its `hostedUrl`. */
  hosted: HostedRequest.optional(),
});
export type CreateLinkSessionBody = z.infer<typeof CreateLinkSessionBody>;

/** A link session as a start uses it: the merchant's values, the consumer opened. */
const LinkSessionSchema = CreateLinkSessionBody.extend({
  ...StoredSavedAccountFields,
  createdAt: z.number(),
  expiresAt: z.number(),
});
export type LinkSession = z.infer<typeof LinkSessionSchema>;

/**
 * A link session as stored, and as a start reads it back (parsed: another instance wrote it): the
 * consumer's name and e-mail sealed like a token (`sealedConsumer`, bound to the link session), so no
 * backend, a Redis dump or a copy of the SQLite file, holds them in the clear. They live as long as the
 * record: the link session's lifetime and RECORD_GRACE_MS (docs/GOING-TO-PRODUCTION.md, "Personal data").
 */
const StoredLinkSession = LinkSessionSchema.omit({ consumer: true }).extend({ sealedConsumer: z.string() });
const ConsumerSchema = CreateLinkSessionBody.shape.consumer;
const consumerContext = (id: string) => `link-session-consumer:${id}`;
/** A link session written before the consumer was sealed (made before an upgrade, still within its lifetime). */
const LegacyStoredLinkSession = LinkSessionSchema;

/** What POST /link-sessions answers. */
export interface CreatedLinkSession {
  linkToken: string;
  /** ISO 8601. */
  expiresAt: string;
  /** With `hosted`: the page to open or send the shopper (as long as the link token lives; no token in it). */
  hostedUrl?: string;
}

/** The id a link session is stored and referred to under: a hash of its token, never the token. */
export function linkSessionId(linkToken: string): string {
  return createHash('sha256').update(linkToken).digest('base64url');
}

export interface LinkSessionsDeps {
  config: Pick<ProxyConfig, 'linkSessionTtlMs' | 'hostedRedirectSchemes' | 'sandbox' | 'publicUrl' | 'mountPath'>;
  linkSessions: LinkSessionStore;
  /** Seals the consumer's name and e-mail in the stored record. */
  sealer: Sealer;
  /** Whether a link session's order is paid (or being paid): it then starts nothing more. */
  payments: Pick<PaymentStore, 'get'>;
  accounts: Pick<SavedAccounts, 'open' | 'offer' | 'find' | 'remove'>;
  logger: Logger;
  now: () => number;
}

/** A link session a start or a choice may use: its id (the hash of its token) and its values. */
export interface ResolvedLinkSession {
  id: string;
  session: LinkSession;
}

/** What the hosted page of a hosted reference shows (routes/hosted-page.ts renders it with pages/hosted-page.ts). */
export type HostedPageView =
  | {
      kind: 'page';
      session: LinkSession;
      linkToken: string;
      /** Where the page sends the shopper for each way the flow ends, in HOSTED_STATUSES' order. */
      redirects: Record<HostedStatus, string>;
      expiresInMs: number;
    }
  | {
      kind: 'message';
      status: 404 | 410;
      message: 'unknown' | 'expired' | 'used';
      /** The link session's language; when `byRequest`, there is none to go by: the browser's preference. */
      language: string | undefined;
      byRequest: boolean;
    };

export interface LinkSessions {
  /** POST /link-sessions, `proxy.createLinkSession`: the saved accounts opened, the session stored. */
  create(input: CreateLinkSessionBody): Promise<CreatedLinkSession>;
  /** The link session a start may use: 404 unknown, 410 expired, 409 its order is paid (or being paid). */
  resolve(linkToken: string): Promise<ResolvedLinkSession>;
  /** Counts one use (a start, a saved account chosen): 429 naming `linkToken` past MAX_USES_PER_LINK_SESSION. */
  spend(id: string): Promise<void>;
  /** What the element is offered for the link session of `linkToken`. */
  offer(linkToken: string): Promise<OfferView>;
  /** The shopper removed an offered saved account. */
  removeSavedAccount(linkToken: string, savedAccountId: string): Promise<void>;
  /** What the hosted page of `hostedRef` shows. */
  hostedPage(hostedRef: string): Promise<HostedPageView>;
}

const refused = (
  slug: 'unknown-link-token' | 'link-token-expired' | 'link-token-used',
  detail: string,
  message: string,
) => problem(slug, detail, { errors: [{ path: 'linkToken', message }] });

export function createLinkSessions(deps: LinkSessionsDeps): LinkSessions {
  const { config, linkSessions, accounts, now } = deps;

  async function create(input: CreateLinkSessionBody): Promise<CreatedLinkSession> {
    if (input.hosted) checkCompletionUri(config, input.hosted.completionRedirectUri);
    // A hosted link can be forwarded (docs/HOSTED-LINK.md): saving from it is the merchant's explicit choice.
    if (input.hosted && input.allowSaving && !input.hosted.allowSaving) {
      throw validationProblem('The request body', [
        {
          path: 'allowSaving',
          message:
            'is refused for a hosted page unless hosted.allowSaving is true as well: a forwarded hosted link would let someone else save their account for this user',
        },
      ]);
    }
    // A hosted page's link token is derived from its reference (hosted.ts), so the page can hand it to its element.
    const hostedRef = input.hosted ? newHostedRef() : undefined;
    const linkToken = hostedRef ? linkTokenOfHostedRef(hostedRef) : `lt_${randomBytes(24).toString('base64url')}`;
    const { savedAccounts, reauthorize, consumer, ...purchase } = input;
    const offered = await accounts.open(input.merchantUserId, { savedAccounts, reauthorize });
    const at = now();
    const id = linkSessionId(linkToken);
    const stored: z.infer<typeof StoredLinkSession> = {
      ...purchase,
      ...offered,
      sealedConsumer: deps.sealer.seal(JSON.stringify(consumer), consumerContext(id)),
      createdAt: at,
      expiresAt: at + config.linkSessionTtlMs,
    };
    // Kept past its expiry for the grace period, so a late start hears "expired" rather than "unknown".
    await linkSessions.create(id, stored, config.linkSessionTtlMs + RECORD_GRACE_MS);
    deps.logger.info(
      { merchantTransactionId: input.merchantTransactionId, hosted: input.hosted !== undefined },
      'link session created',
    );
    return {
      linkToken,
      expiresAt: new Date(stored.expiresAt).toISOString(),
      ...(hostedRef ? { hostedUrl: hostedUrl(config, hostedRef) } : {}),
    };
  }

  async function resolve(linkToken: string): Promise<ResolvedLinkSession> {
    const id = linkSessionId(linkToken);
    const stored = await linkSessions.get(id);
    const parsed = stored === undefined ? undefined : StoredLinkSession.safeParse(stored);
    const legacy = stored !== undefined && !parsed?.success ? LegacyStoredLinkSession.safeParse(stored) : undefined;
    if (legacy?.success) return checked(id, legacy.data);
    if (!parsed?.success) {
      throw refused(
        'unknown-link-token',
        "No link session has this token: the merchant's server creates one per checkout (POST /link-sessions).",
        'is not a known link token',
      );
    }
    const { sealedConsumer, ...values } = parsed.data;
    // UnsealError (a key this instance lacks, a record altered or moved): 503 sealing-key-unavailable.
    return checked(id, {
      ...values,
      consumer: ConsumerSchema.parse(JSON.parse(deps.sealer.open(sealedConsumer, consumerContext(id)))),
    });
  }

  /** A link session read back, if a start may still use it. */
  async function checked(id: string, session: LinkSession): Promise<ResolvedLinkSession> {
    if (session.expiresAt <= now()) {
      throw refused(
        'link-token-expired',
        "This link token has expired: the merchant's server creates a new link session.",
        'has expired',
      );
    }
    // Paid, or being paid (a payment of the order is on record, whatever its state, unless the merchant
    // reconciled it as charging nothing: the order may then be paid again).
    const payment = await deps.payments.get(session.merchantTransactionId);
    if (payment !== undefined && payment.state !== 'not-charged') {
      throw refused(
        'link-token-used',
        'The order of this link token has been paid; a link token is for one purchase.',
        'has already been used',
      );
    }
    return { id, session };
  }

  async function spend(id: string): Promise<void> {
    if (!(await linkSessions.use(id, MAX_USES_PER_LINK_SESSION))) {
      throw problem(
        'link-token-exhausted',
        `This link token has started ${MAX_USES_PER_LINK_SESSION} verifications or choices: the merchant's server creates a new link session.`,
        { errors: [{ path: 'linkToken', message: 'has been used too many times' }] },
      );
    }
  }

  async function hostedPage(hostedRef: string): Promise<HostedPageView> {
    if (!HOSTED_REF_PATTERN.test(hostedRef))
      return { kind: 'message', status: 404, message: 'unknown', language: undefined, byRequest: true };
    const linkToken = linkTokenOfHostedRef(hostedRef);
    let resolved: ResolvedLinkSession;
    try {
      resolved = await resolve(linkToken);
    } catch (error) {
      if (!(error instanceof ProblemError) || error.status >= 500) throw error;
      // Expired or used: the record is still there (its grace), and says the shopper's language.
      const stored = error.slug === 'unknown-link-token' ? undefined : await linkSessions.get(linkSessionId(linkToken));
      const language = typeof stored?.language === 'string' ? stored.language : undefined;
      const [status, message] =
        error.slug === 'link-token-expired'
          ? ([410, 'expired'] as const)
          : error.slug === 'link-token-used'
            ? ([410, 'used'] as const)
            : ([404, 'unknown'] as const);
      return { kind: 'message', status, message, language, byRequest: language === undefined };
    }
    const { session } = resolved;
    const hosted = HostedRequest.safeParse(session.hosted);
    // A link session made without `hosted` has no page (its token cannot come from a hosted reference anyway).
    if (!hosted.success)
      return { kind: 'message', status: 404, message: 'unknown', language: session.language, byRequest: false };
    const redirects = Object.fromEntries(
      HOSTED_STATUSES.map((status) => [status, completionRedirect(hosted.data, status)]),
    ) as Record<HostedStatus, string>;
    return { kind: 'page', session, linkToken, redirects, expiresInMs: session.expiresAt - now() };
  }

  return {
    create,
    resolve,
    spend,
    async offer(linkToken) {
      const { session } = await resolve(linkToken);
      return accounts.offer(session);
    },
    async removeSavedAccount(linkToken, savedAccountId) {
      const { session } = await resolve(linkToken);
      await accounts.remove(session, await accounts.find(session, savedAccountId));
    },
    hostedPage,
  };
}
