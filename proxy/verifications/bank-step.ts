// The bank step bound to the browser that started it (docs/PROXY.md "Security notes"). The stop it puts to an
// attack: someone starts a verification, sends its consumerUrl to a victim, and the victim signs in —
// the starter must not be paid with the victim's account, nor have it saved.
//
// What the proxy can know: the bank sends the browser that signed in to the return page, and the
// starting browser holds the session's binding cookie (http/bank-step-cookie.ts). Whoever started holds
// that cookie, attacker included, and can visit the return page whenever they like; so a visit with the
// cookie proves nothing on its own. The rules, in the order the return page applies them:
// - The first return decides, once (a marker, shared by every instance, durable with the store):
//   - a return WITHOUT the binding (the bank sent back a browser that did not start) decides
//     `elsewhere`, at any time: nothing of the session is ever released, the starter's page gets the
//     failure BANK_STEP_ELSEWHERE, no link reference, no saved account, no onOutcome success;
//   - a return WITH the binding counts only after the outcome is stored AND a grace period after it has
//     passed (BANK_STEP_RETURN_GRACE_MS), so the bank's redirect of the browser that signed in, which
//     arrives about when the provider's notification does, wins over a starter polling the page. Until
//     then the page says "Finishing…" and reloads. Then it decides `confirmed` and the success is released.
// - A success held meanwhile is stored (its notification acknowledged) but withheld from the browser, the
//   merchant's hook and events and the API-key routes (`releasedRecord`), and expires unconfirmed.
// The limit: a victim whose browser never comes back to the return page (tab closed at the bank, no
// redirect) leaves the starter's later return to confirm. docs/PROXY.md "Security notes" says so.
import { problem } from '../common/errors.ts';
import { markerKey, sessionMarkerTtlMs } from '../storage/markers.ts';
import type { FailureOutcome, SessionRecord, SessionStore } from '../storage/sessions.ts';

/** The failure a session whose bank step was completed in another browser ends with (shopper-words.ts has its words). */
export const BANK_STEP_ELSEWHERE_CODE = 'BANK_STEP_ELSEWHERE';

export const BANK_STEP_ELSEWHERE: FailureOutcome = {
  status: 'failure',
  code: BANK_STEP_ELSEWHERE_CODE,
  message: 'The bank step was completed in a browser other than the one that started the verification; nothing was linked.',
};

/** How a bound bank step ended. */
export type BankStepDecision = 'confirmed' | 'elsewhere';

/** The decision taken for `record`'s bank step, `confirmed` when it is not bound, undefined while none was taken. */
export async function bankStepDecision(store: Pick<SessionStore, 'readMark'>, record: SessionRecord): Promise<BankStepDecision | undefined> {
  if (!record.browserBinding) return 'confirmed';
  const value = await store.readMark(markerKey.bankStep(record.sessionId));
  if (value === undefined) return undefined;
  // Anything but `confirmed` fails safe.
  return value === 'confirmed' ? 'confirmed' : 'elsewhere';
}

/** Takes `decision` unless one was taken first; resolves to the one that holds. */
async function decide(store: Pick<SessionStore, 'mark'>, record: SessionRecord, decision: BankStepDecision, now: number): Promise<BankStepDecision> {
  const held = await store.mark(markerKey.bankStep(record.sessionId), decision, sessionMarkerTtlMs(record, now));
  return held === 'confirmed' ? 'confirmed' : 'elsewhere';
}

/**
 * When the proxy first saw `record`'s outcome stored (set by the notification, or by the return page if
 * it sees it first): the return grace counts from there.
 */
export async function outcomeArrivedAt(store: Pick<SessionStore, 'mark'>, record: SessionRecord, now: number): Promise<number> {
  const value = await store.mark(markerKey.bankStepOutcomeAt(record.sessionId), String(now), sessionMarkerTtlMs(record, now));
  const at = Number(value);
  return Number.isFinite(at) ? at : now;
}

/**
 * What a visit to the return page of a bound session decides: `confirmed` (this browser holds the
 * binding, the outcome is in and its grace over: release), `other-browser` (confirmed earlier, this one
 * has no binding: nothing for it), `elsewhere` (a browser without the binding came back first: nothing is
 * ever released), `finishing` (this browser holds the binding but it cannot count yet: come back in a
 * moment), `expired` (the session's time ran out unconfirmed).
 */
export type ReturnVerdict = 'confirmed' | 'other-browser' | 'elsewhere' | 'finishing' | 'expired';

export interface BankStepReturn {
  record: SessionRecord;
  /** Whether the request carries the session's binding cookie. */
  withBinding: boolean;
  now: number;
  graceMs: number;
}

/** Applies the rules at the top of this file to one visit of a bound session's return page. */
export async function bankStepReturn(store: Pick<SessionStore, 'mark' | 'readMark' | 'settle'>, visit: BankStepReturn): Promise<ReturnVerdict> {
  const { record, withBinding, now, graceMs } = visit;
  let decision = await bankStepDecision(store, record);
  if (decision === undefined) {
    if (!withBinding) {
      decision = await decide(store, record, 'elsewhere', now);
    } else if (record.outcome && record.outcome.status !== 'success') {
      // A failure is not held: nothing to confirm.
      return 'confirmed';
    } else if (!record.outcome || now >= record.expiresAt) {
      return record.state === 'expired' || now >= record.expiresAt ? 'expired' : 'finishing';
    } else {
      const arrivedAt = await outcomeArrivedAt(store, record, now);
      if (now < arrivedAt + graceMs) return 'finishing';
      decision = await decide(store, record, 'confirmed', now);
    }
  }
  if (decision === 'elsewhere') {
    // Before any outcome: the session ends here, so a success reported later is never even stored.
    if (!record.outcome) await store.settle(record.sessionId, BANK_STEP_ELSEWHERE);
    return 'elsewhere';
  }
  return withBinding ? 'confirmed' : 'other-browser';
}

/**
 * `record` as a browser, the merchant's hook and events and the API-key routes may see it: a success
 * whose bank step is undecided reads as still pending without its outcome (and as expired once its time
 * is up); one completed elsewhere reads as the failure BANK_STEP_ELSEWHERE, never the account.
 */
export async function releasedRecord(store: Pick<SessionStore, 'readMark'>, record: SessionRecord, now: number): Promise<SessionRecord> {
  if (record.outcome?.status !== 'success' || !record.browserBinding) return record;
  const decision = await bankStepDecision(store, record);
  if (decision === 'confirmed') return record;
  const { outcome: _withheld, ...rest } = record;
  if (decision === 'elsewhere') return { ...rest, state: 'failed', outcome: BANK_STEP_ELSEWHERE };
  return { ...rest, state: now >= record.expiresAt ? 'expired' : 'pending' };
}

/** The session store's reads as a browser may see them (the relay's view). */
export function releasedReader(store: Pick<SessionStore, 'get' | 'readMark'>, now: () => number): Pick<SessionStore, 'get'> {
  return {
    async get(sessionId) {
      const record = await store.get(sessionId);
      return record && releasedRecord(store, record, now());
    },
  };
}

/** 403 unless the bank step of `record` was confirmed by its starting browser. */
export async function requireBankStepConfirmed(store: Pick<SessionStore, 'readMark'>, record: SessionRecord, path: string): Promise<void> {
  if ((await bankStepDecision(store, record)) === 'confirmed') return;
  throw problem('bank-step-unconfirmed',
    'The bank step of this verification was not completed in the browser that started it, so its account cannot be used.',
    { errors: [{ path, message: 'was not confirmed by the browser that started the verification' }] });
}
