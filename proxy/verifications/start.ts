// Starting a verification: the upstream request built from the purchase — the merchant server's link
// session, or what the merchant's enrichStart hook fills in from its own session — and what only the
// proxy decides (merchant id, product, per-session return and notification URLs, originator IP),
// checked, sent to endpoint 2, and the session created.
import type { Logger } from 'pino';
import type { ProxyConfig } from '../config/schema.ts';
import { problem } from '../common/errors.ts';
import { newId, sessionLogRef } from '../common/ids.ts';
import type { ProxyMetrics } from '../common/metrics.ts';
import { fieldErrors, validationProblem } from '../common/validation.ts';
import type { SavedAccounts } from '../accounts/accounts.ts';
import type { ShopperClient } from '../accounts/saving.ts';
import type { MerchantEvents } from '../events/events.ts';
import type { LinkSession, LinkSessions } from '../link-sessions/link-sessions.ts';
import { markerKey, sessionMarkerTtlMs } from '../storage/markers.ts';
import type { SessionRecord, SessionStore } from '../storage/sessions.ts';
import { VerificationRequest, type VerificationClient } from '../upstream/verification-client.ts';
import { newReturnProof, RETURN_PROOF_PARAM } from './return-proof.ts';
import type { StartVerificationBody } from './start-body.ts';

/** The upstream request before validation: any field may still be missing. */
export type VerificationDraft = {
  accountToken?: string | undefined;
  countryCode: string;
  consumer: Record<string, unknown>;
  merchant: Record<string, string | undefined>;
  transaction: Record<string, string | undefined>;
};

/** One start, as the route read it from the request. */
export interface StartRequest {
  body: StartVerificationBody;
  /** The starting browser: its address (`req.ip` as Express's `trust proxy` decides it, IPv4 plain) and User-Agent. */
  client: ShopperClient;
  /** The bank step's binding (http/bank-step-cookie.ts): what the session keeps of the browser's secret. */
  browserBinding?: string | undefined;
  /** The merchant's enrichStart hook, for this request: completes a start without a link token. */
  enrich?: ((draft: VerificationDraft) => VerificationDraft | Promise<VerificationDraft>) | undefined;
}

export interface StartDeps {
  config: Pick<
    ProxyConfig,
    | 'publicUrl'
    | 'mountPath'
    | 'notificationPublicUrl'
    | 'merchantId'
    | 'merchantSubId'
    | 'product'
    | 'transactionRegion'
    | 'sessionTtlMs'
  >;
  store: Pick<SessionStore, 'create' | 'mark'>;
  /** Endpoint 2. */
  upstream: VerificationClient;
  linkSessions: Pick<LinkSessions, 'resolve' | 'spend'>;
  accounts: Pick<SavedAccounts, 'saving' | 'tokenToReauthorize'>;
  events: Pick<MerchantEvents, 'sessionStarted'>;
  metrics: Pick<ProxyMetrics, 'starts'>;
  logger: Logger;
  now: () => number;
}

// Field errors in the upstream request are named as the start's purchase knows them (the link session's
// and the enrichStart hook's draft's fields).
const PURCHASE_FIELD_NAMES: Record<string, string> = {
  'merchant.merchantUserId': 'merchantUserId',
  'merchant.merchantTransactionId': 'merchantTransactionId',
  'transaction.amount': 'amount',
  'transaction.currency': 'currency',
  'transaction.language': 'language',
  'transaction.dataPassThrough': 'dataPassThrough',
};

/** Starts one verification for the page's request and returns its new session. */
export type StartVerification = (request: StartRequest) => Promise<SessionRecord>;

export function createVerificationStarter(deps: StartDeps): StartVerification {
  const { config, store, logger, linkSessions, accounts } = deps;
  const base = config.publicUrl.replace(/\/+$/, '') + config.mountPath;
  // The provider's notifications may have a listener of their own (notificationPublicUrl).
  const notificationBase = (config.notificationPublicUrl ?? config.publicUrl).replace(/\/+$/, '') + config.mountPath;

  /** The upstream request's purchase fields from a link session: the server's values alone. */
  function draftFromLinkSession(
    session: LinkSession,
  ): Pick<VerificationDraft, 'consumer' | 'merchant' | 'transaction'> {
    return {
      consumer: { ...session.consumer },
      merchant: { merchantUserId: session.merchantUserId, merchantTransactionId: session.merchantTransactionId },
      transaction: {
        amount: session.amount,
        currency: session.currency,
        language: session.language,
        dataPassThrough: session.dataPassThrough,
      },
    };
  }

  /**
   * The upstream request's purchase fields for the enrichStart hook to fill: the proxy's defaults alone
   * (an order id, USD, the shopper's language), nothing about the purchase from the page.
   */
  function draftForHook(body: StartVerificationBody): Pick<VerificationDraft, 'consumer' | 'merchant' | 'transaction'> {
    return {
      consumer: {},
      merchant: { merchantTransactionId: `obv-${newId()}` },
      transaction: { currency: 'USD', ...(body.language ? { language: body.language } : {}) },
    };
  }

  return async ({ body, client, browserBinding, enrich }) => {
    // The merchant's server names the shopper and the purchase (a link session, or its enrichStart hook),
    // in every mode, sandbox too: never the page.
    if (!body.linkToken && !enrich) {
      throw problem(
        'link-session-required',
        'A verification starts from a link session: your server creates one (POST /link-sessions) and the page passes its linkToken.',
        {
          errors: [
            {
              path: 'linkToken',
              message: "is required: create a link session on your server and set the element's link-token attribute",
            },
          ],
        },
      );
    }
    const linkSession = body.linkToken ? await linkSessions.resolve(body.linkToken) : undefined;
    if (linkSession) await linkSessions.spend(linkSession.id);
    const purchase = linkSession ? draftFromLinkSession(linkSession.session) : draftForHook(body);
    // Returning shoppers: a success saved for the user (consent, or a re-authorization carrying its token).
    const saving = linkSession && (await accounts.saving(linkSession.session, client, body.consent, body.another));
    const reauthorizing = linkSession && accounts.tokenToReauthorize(linkSession.session, body.another);
    const language = purchase.transaction.language;
    const sessionId = newId();
    const notificationRef = newId();
    // The session id reads the outcome, so it never leaves browser ↔ proxy: the provider gets references.
    const returnRef = newId();
    // The return page speaks the consumer's language, like the bank's page: `lang=` unless it is English. A
    // bound bank step's URL also carries its one-time proof (return-proof.ts), for the bank's redirect alone.
    const proof = browserBinding ? newReturnProof() : undefined;
    const query = new URLSearchParams([
      ...(language && !/^en(-|$)/i.test(language) ? [['lang', language]] : []),
      ...(proof ? [[RETURN_PROOF_PARAM, proof.proof]] : []),
    ]).toString();
    const returnURL = `${base}/return/${returnRef}${query ? `?${query}` : ''}`;
    const notificationURL = `${notificationBase}/notifications/${notificationRef}`;
    const draft: VerificationDraft = {
      countryCode: 'US',
      consumer: purchase.consumer,
      merchant: { ...purchase.merchant, merchantId: config.merchantId, merchantSubId: config.merchantSubId },
      transaction: {
        ...purchase.transaction,
        product: config.product,
        transactionRegion: config.transactionRegion,
        originatorIp: client.address,
      },
    };
    // A link session is already the server's word; enrichStart completes a start without one.
    const enriched = enrich && !linkSession ? await enrich(draft) : draft;
    const candidate = {
      ...enriched,
      ...(reauthorizing ? { accountToken: reauthorizing } : {}),
      countryCode: 'US',
      merchant: { ...enriched.merchant, returnURL, notificationURL },
    };
    const parsed = VerificationRequest.safeParse(candidate);
    if (!parsed.success) {
      const errors = fieldErrors(parsed.error).map((e) => ({ ...e, path: PURCHASE_FIELD_NAMES[e.path] ?? e.path }));
      throw validationProblem('The verification request', errors, 'is incomplete');
    }
    const started = await deps.upstream.start(parsed.data);
    const now = deps.now();
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
      ...(linkSession ? { linkSessionId: linkSession.id } : {}),
      ...(linkSession?.session.hosted ? { hosted: true as const } : {}),
      ...(saving ? { saving } : {}),
      ...(typeof started.verificationId === 'string' && started.verificationId
        ? { verificationId: started.verificationId }
        : {}),
      ...(browserBinding ? { browserBinding } : {}),
      ...(proof ? { returnProof: proof.digest } : {}),
    };
    // Its end is checked when its time is up (link.expired), scheduled first so no session escapes it.
    await deps.events.sessionStarted(record);
    await store.create(record);
    await store.mark(markerKey.returnRef(returnRef), sessionId, sessionMarkerTtlMs(record, now));
    deps.metrics.starts.inc({ result: 'started' });
    logger.info(
      { session: sessionLogRef(sessionId), merchantTransactionId: record.merchantTransactionId },
      'verification started',
    );
    return record;
  };
}
