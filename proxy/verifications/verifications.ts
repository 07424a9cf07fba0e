// The verification session, as one service: its start (start.ts, once per Idempotency-Key:
// idempotency.ts), a saved account chosen instead of a bank step (saved-choice.ts), the browser reading or
// cancelling it, the bank's return (return-visit.ts, with the bank step's binding: bank-step.ts), and the
// delivery of its outcome (delivery.ts), which the notifications, the return page and a saved account's
// choice share.
import type { Logger } from 'pino';
import { problem, ProblemError } from '../common/errors.ts';
import { sessionLogRef } from '../common/ids.ts';
import { safeError } from '../common/logger.ts';
import type { ProxyMetrics } from '../common/metrics.ts';
import type { SavedAccounts } from '../accounts/accounts.ts';
import type { MerchantEvents } from '../events/events.ts';
import type { LinkSessions } from '../link-sessions/link-sessions.ts';
import type { Sealer } from '../sealing/sealer.ts';
import { browserOutcome, type BrowserOutcome, type ResultBus } from '../storage/result-bus.ts';
import { CANCELLED_CODE, type SessionRecord, type SessionStore } from '../storage/sessions.ts';
import type { VerificationClient } from '../upstream/verification-client.ts';
import { bankStepUnconfirmed, choiceUnconfirmed, releasedRecord, settleBankStep, shownRecord } from './bank-step.ts';
import { createOutcomeDelivery, type CompleteDelivery, type OnOutcome } from './delivery.ts';
import { startOnce } from './idempotency.ts';
import { createReturnVisit, type ReturnVisit } from './return-visit.ts';
import { chooseSavedAccount, confirmSavedAccount } from './saved-choice.ts';
import { createVerificationStarter, type StartDeps, type StartRequest } from './start.ts';
import { sessionView, type SessionView } from './view.ts';

export interface VerificationsDeps {
  /** The start's settings: the other parts read only `sessionTtlMs` of them. */
  config: StartDeps['config'];
  store: SessionStore;
  bus: Pick<ResultBus, 'publish'>;
  sealer: Sealer;
  /** Endpoint 2. */
  upstream: VerificationClient;
  linkSessions: Pick<LinkSessions, 'resolve' | 'spend'>;
  accounts: Pick<SavedAccounts, 'saving' | 'tokenToReauthorize' | 'find' | 'tokenOf'>;
  events: Pick<MerchantEvents, 'sessionStarted' | 'sessionEnded'>;
  /** The merchant's hook, called once per session with the stored outcome (token included). */
  onOutcome?: OnOutcome | undefined;
  metrics: Pick<ProxyMetrics, 'starts'>;
  /** OBV_BIND_BANK_STEP: how long after a success a starting browser's return without the proof waits before it confirms (bank-step.ts). */
  bankStepGraceMs: number;
  logger: Logger;
  now: () => number;
}

export interface Verifications {
  /** POST /verifications: a new session (or, for the same Idempotency-Key and body, the first one's). */
  start(request: StartRequest & { idempotencyKey?: string | undefined }): Promise<SessionRecord>;
  /** POST /sessions/lookup: the session as its browser may see it; 404 when there is none. */
  lookup(sessionId: string): Promise<SessionView>;
  /** POST /sessions/cancel: settled as the failure CANCELLED, unless it had ended; the session after. */
  cancel(sessionId: string): Promise<SessionView>;
  /** POST /saved-accounts/use: a saved account chosen, a link reference at once. */
  useSavedAccount(linkToken: string, savedAccountId: string): Promise<BrowserOutcome>;
  /** POST /saved-accounts/confirm: the shopper confirmed the saved account its page chose (saved-choice.ts). */
  confirmSavedAccount(linkRef: string): Promise<void>;
  /** GET /return/:returnRef: what the return page says. */
  returnVisit: ReturnVisit;
  /** Everything after an outcome is stored (the notifications' route runs it too). */
  deliver: CompleteDelivery;
  /**
   * Resolves once `record`'s bank step is confirmed, after delivering it (link.succeeded, onOutcome); 403
   * `bank-step-unconfirmed` naming `path` when it is not (payments, /links). It never waits: a step is
   * confirmed when its starting browser comes back from the bank.
   */
  bankStepConfirmed(record: SessionRecord, path: string): Promise<void>;
  /**
   * The session as the merchant may see it (merchant events), after delivering a confirmed bank step's
   * success (its merchant part left unfinished by an earlier delivery); undefined when the session is gone.
   */
  released(sessionId: string): Promise<SessionRecord | undefined>;
}

export function createVerifications(deps: VerificationsDeps): Verifications {
  const { store, logger, now } = deps;
  const deliver = createOutcomeDelivery(deps);
  const start = createVerificationStarter(deps);

  /** Delivers `record` for a reader that needs its merchant part; a failed step is the next reader's to finish. */
  async function deliverFor(record: SessionRecord): Promise<void> {
    await deliver(record).catch((error: unknown) => {
      // Another delivery running the hook right now (a notification, on this instance or another) is no failure.
      const busy = error instanceof ProblemError && error.slug === 'outcome-in-progress';
      logger[busy ? 'debug' : 'warn'](
        { err: safeError(error), session: sessionLogRef(record.sessionId) },
        "a confirmed bank step's delivery is unfinished; the next reader finishes it",
      );
    });
  }

  /** The session named by the browser; 404 when there is none. */
  async function find(sessionId: string): Promise<SessionRecord> {
    const record = await store.get(sessionId);
    if (!record)
      throw problem('not-found', 'No verification session has this id (it may have been swept after expiry).');
    return record;
  }

  return {
    async start(request) {
      const { idempotencyKey, ...once } = request;
      if (idempotencyKey === undefined) return start(once);
      return startOnce(deps, once.client.address ?? '', idempotencyKey, once.body, () => start(once));
    },
    async lookup(sessionId) {
      return sessionView(await shownRecord(store, await find(sessionId), now()));
    },
    async cancel(sessionId) {
      const record = await find(sessionId);
      const outcome = { status: 'failure', code: CANCELLED_CODE, message: 'Cancelled at the checkout.' } as const;
      const { stored, record: after } = await store.settle(record.sessionId, outcome);
      if (stored) {
        await deps.bus.publish({
          type: 'result',
          sessionId: record.sessionId,
          outcome: browserOutcome(outcome, record.language),
        });
        logger.info({ session: sessionLogRef(record.sessionId) }, 'verification cancelled at the checkout');
      }
      const released = await releasedRecord(store, after, now());
      // Also when this call did not store it: a cancel retried after a failed emit records it now (once per session).
      await deps.events.sessionEnded(released);
      // Already settled (or expired): the answer says what the session ended as.
      return sessionView(released);
    },
    useSavedAccount: (linkToken, savedAccountId) => chooseSavedAccount({ ...deps, deliver }, linkToken, savedAccountId),
    confirmSavedAccount: (linkRef) => confirmSavedAccount({ ...deps, deliver }, linkRef),
    returnVisit: createReturnVisit({ ...deps, deliver }),
    deliver,
    async bankStepConfirmed(record, path) {
      if (await choiceUnconfirmed(store, record)) {
        throw problem(
          'choice-unconfirmed',
          "The shopper has not confirmed this saved account yet (the form's submit, or Continue on the hosted page).",
          { errors: [{ path, message: 'was not confirmed by the shopper' }] },
        );
      }
      const { released } = await settleBankStep(store, record, now());
      if (released.outcome?.status !== 'success') throw bankStepUnconfirmed(path);
      // The merchant hears of it (link.succeeded, onOutcome) before anything is paid with it.
      if (record.browserBinding) await deliverFor(record);
    },
    async released(sessionId) {
      const record = await store.get(sessionId);
      if (!record) return undefined;
      if (record.browserBinding && record.outcome?.status === 'success') await deliverFor(record);
      return releasedRecord(store, record, now());
    },
  };
}
