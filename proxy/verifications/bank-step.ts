// The bank step bound to the browser that started it (docs/PROXY.md "Security notes"). The stop it puts to an
// attack: someone starts a verification, sends its consumerUrl to a victim, and the victim signs in —
// the starter must not be paid with the victim's account, nor have it saved, nor be told it is linked.
//
// What the proxy can know: the bank sends the browser that signed in to the return page; the starting
// browser holds the session's binding cookie (http/bank-step-cookie.ts); and the return URL carries a
// one-time proof that only the provider was given (return-proof.ts). Whoever started holds the cookie,
// attacker included, and may know the return page's address, so a visit with the cookie alone proves
// nothing. The rules, in the order the return page applies them:
// - A return WITHOUT the binding (the bank sent back a browser that did not start) decides `elsewhere`
//   once, at any time before the step is confirmed: nothing of the session is ever released, the
//   starter's page gets the failure BANK_STEP_ELSEWHERE, no link reference, no saved account, no
//   onOutcome success.
// - A return WITH the binding AND the proof is the starting browser back from the bank: the step is
//   confirmed at once, whether or not the outcome is stored yet. Its page is shown the success, the
//   merchant is told and the payment goes through as soon as the outcome is there: the honest shopper
//   waits for nothing. (As OAuth's PKCE: whoever holds both the starter's secret and the code the
//   redirect carried is the one that started and went through the bank.)
// - A return WITH the binding but no proof (a starter who knows the return page's address; or a provider
//   that dropped the URL's query) counts only once the outcome is stored AND a grace has passed after it
//   (BANK_STEP_RETURN_GRACE_MS) with no return without the binding: "Finishing…" and a reload until then,
//   nothing shown or released sooner, so the bank's redirect of the browser that signed in, which arrives
//   about when the notification does, still wins.
// - Until the step is confirmed, a stored success is withheld from the merchant's hook and events and
//   the API-key routes (`releasedRecord`) and from the browser (`shownRecord`); its notification is still
//   acknowledged; one never confirmed expires.
// The limits — a provider that shows the return URL (and so the proof) to whoever opens consumerUrl, a
// victim whose browser never comes back — are in docs/PROXY.md "Security notes".
import { problem } from '../common/errors.ts';
import { markerKey, sessionMarkerTtlMs } from '../storage/markers.ts';
import type { FailureOutcome, SessionRecord, SessionStore } from '../storage/sessions.ts';

/** The failure a session whose bank step was completed in another browser ends with (shopper-words.ts has its words). */
export const BANK_STEP_ELSEWHERE_CODE = 'BANK_STEP_ELSEWHERE';

export const BANK_STEP_ELSEWHERE: FailureOutcome = {
  status: 'failure',
  code: BANK_STEP_ELSEWHERE_CODE,
  message:
    'The bank step was completed in a browser other than the one that started the verification; nothing was linked.',
};

/** How a bound bank step ended. */
export type BankStepDecision = 'confirmed' | 'elsewhere';

/** The session store's parts the bank step reads and writes: markers, and the settle of BANK_STEP_ELSEWHERE. */
export type BankStepStore = Pick<SessionStore, 'mark' | 'readMark'>;

/** A success whose bank step is bound: the only kind of outcome ever held. */
const held = (record: SessionRecord) => Boolean(record.browserBinding) && record.outcome?.status === 'success';

/**
 * Whether `record`'s outcome, once stored, goes to the merchant as it is, with no decision to wait for: not a
 * held success (above) nor a saved choice its shopper has yet to confirm (`choiceUnconfirmed`). Reads nothing.
 */
export const releasedOnceStored = (record: SessionRecord): boolean =>
  record.outcome?.status !== 'success' || (!record.browserBinding && record.awaitsConfirmation !== true);

/** The decision taken for `record`'s bank step, `confirmed` when it is not bound, undefined while none was taken. */
export async function bankStepDecision(
  store: Pick<SessionStore, 'readMark'>,
  record: SessionRecord,
): Promise<BankStepDecision | undefined> {
  if (!record.browserBinding) return 'confirmed';
  const value = await store.readMark(markerKey.bankStep(record.sessionId));
  if (value === undefined) return undefined;
  // Anything but `confirmed` fails safe.
  return value === 'confirmed' ? 'confirmed' : 'elsewhere';
}

/** Takes `decision` unless one was taken first; resolves to the one that holds. */
async function decide(
  store: Pick<SessionStore, 'mark'>,
  record: SessionRecord,
  decision: BankStepDecision,
  now: number,
): Promise<BankStepDecision> {
  const taken = await store.mark(markerKey.bankStep(record.sessionId), decision, sessionMarkerTtlMs(record, now));
  return taken === 'confirmed' ? 'confirmed' : 'elsewhere';
}

/**
 * Whether the starting browser came back with the proof under a release before 2026-11-29, which marked it
 * `back` and confirmed the step only at the grace's end: such a session, in flight across the upgrade, is
 * shown its account (`shownRecord`) and confirmed by the next delivery, payment or `/links` read
 * (`settleBankStep`); a browser without the binding back before that still ends it elsewhere.
 */
async function isBack(store: Pick<SessionStore, 'readMark'>, record: SessionRecord): Promise<boolean> {
  return (await store.readMark(markerKey.bankStepBack(record.sessionId))) !== undefined;
}

/**
 * When the proxy first saw `record`'s outcome stored (set by the notification, or by whoever sees it first
 * after it): the grace counts from there.
 */
export async function outcomeArrivedAt(
  store: Pick<SessionStore, 'mark'>,
  record: SessionRecord,
  now: number,
): Promise<number> {
  const value = await store.mark(
    markerKey.bankStepOutcomeAt(record.sessionId),
    String(now),
    sessionMarkerTtlMs(record, now),
  );
  const at = Number(value);
  return Number.isFinite(at) ? at : now;
}

/**
 * What a visit to the return page of a bound session decides: `confirmed` (this browser started: back with
 * the proof, at once; with the binding alone, once the grace after the outcome is over: release),
 * `other-browser` (confirmed earlier, this one has no binding: nothing for it), `elsewhere` (a browser
 * without the binding came back first: nothing is ever released), `finishing` (this browser holds the
 * binding but without the proof it cannot count yet: come back in a moment), `expired` (the session's time
 * ran out unconfirmed).
 */
export type ReturnVerdict = 'confirmed' | 'other-browser' | 'elsewhere' | 'finishing' | 'expired';

export interface BankStepReturn {
  record: SessionRecord;
  /** Whether the request carries the session's binding cookie. */
  withBinding: boolean;
  /** Whether its URL carries the session's return proof (return-proof.ts `provesReturn`). */
  proven: boolean;
  now: number;
  graceMs: number;
}

/** Applies the rules at the top of this file to one visit of a bound session's return page. */
export async function bankStepReturn(
  store: BankStepStore & Pick<SessionStore, 'settle'>,
  visit: BankStepReturn,
): Promise<ReturnVerdict> {
  const { record, withBinding, now, graceMs } = visit;
  let decision = await bankStepDecision(store, record);
  if (decision === undefined && !withBinding) decision = await decide(store, record, 'elsewhere', now);
  if (decision === 'elsewhere') {
    // Before any outcome: the session ends here, so a success reported later is never even stored.
    if (!record.outcome) await store.settle(record.sessionId, BANK_STEP_ELSEWHERE);
    return 'elsewhere';
  }
  if (!withBinding) return 'other-browser';
  if (decision === 'confirmed') return 'confirmed';
  const expired = record.state === 'expired' || now >= record.expiresAt;
  // A proof that comes back after the session's time releases nothing.
  if (visit.proven) return expired ? 'expired' : decide(store, record, 'confirmed', now);
  // A failure is not held: nothing to confirm.
  if (record.outcome && record.outcome.status !== 'success') return 'confirmed';
  if (!record.outcome || expired) return expired ? 'expired' : 'finishing';
  if (now < (await outcomeArrivedAt(store, record, now)) + graceMs) return 'finishing';
  return decide(store, record, 'confirmed', now);
}

/**
 * `record` as its page may see it: a success is shown once its step is confirmed (or left `back` by an
 * earlier release: `isBack`); until then it reads as still pending without its outcome (expired
 * once its time is up); one completed elsewhere reads as the failure BANK_STEP_ELSEWHERE, never the account.
 * Reads only: it decides nothing.
 */
export async function shownRecord(
  store: Pick<SessionStore, 'readMark'>,
  record: SessionRecord,
  now: number,
): Promise<SessionRecord> {
  if (!held(record)) return record;
  const decision = await bankStepDecision(store, record);
  if (decision === undefined && (await isBack(store, record))) return record;
  return withheld(record, decision, now);
}

/**
 * `record` as the merchant's hook and events and the API-key routes may see it: a success only once its
 * bank step is confirmed (it pays, saves and says link.succeeded); otherwise as `shownRecord` withholds it.
 */
export async function releasedRecord(
  store: Pick<SessionStore, 'readMark'>,
  record: SessionRecord,
  now: number,
): Promise<SessionRecord> {
  if (await choiceUnconfirmed(store, record)) return withheld(record, undefined, now);
  if (!held(record)) return record;
  return withheld(record, await bankStepDecision(store, record), now);
}

function withheld(record: SessionRecord, decision: BankStepDecision | undefined, now: number): SessionRecord {
  if (decision === 'confirmed') return record;
  const { outcome: _withheld, ...rest } = record;
  if (decision === 'elsewhere') return { ...rest, state: 'failed', outcome: BANK_STEP_ELSEWHERE };
  return { ...rest, state: now >= record.expiresAt ? 'expired' : 'pending' };
}

/** The session store's reads as a browser may see them (the relay's view). */
export function shownReader(
  store: Pick<SessionStore, 'get' | 'readMark'>,
  now: () => number,
): Pick<SessionStore, 'get'> {
  return {
    async get(sessionId) {
      const record = await store.get(sessionId);
      return record && shownRecord(store, record, now());
    },
  };
}

/** Where a held success stands: as its page and as the merchant see it. */
export interface BankStepViews {
  shown: SessionRecord;
  released: SessionRecord;
}

/** `record`'s views, after confirming a step left `back` by an earlier release (`isBack`). */
export async function settleBankStep(store: BankStepStore, record: SessionRecord, now: number): Promise<BankStepViews> {
  // A saved account chosen on a page: its page has it; the merchant waits for the shopper's confirmation.
  if (await choiceUnconfirmed(store, record)) return { shown: record, released: withheld(record, undefined, now) };
  if (!held(record)) return { shown: record, released: record };
  let decision = await bankStepDecision(store, record);
  if (decision === undefined && (await isBack(store, record))) decision = await decide(store, record, 'confirmed', now);
  const view = withheld(record, decision, now);
  return { shown: view, released: view };
}

/** Whether `record` is a saved account chosen on a page that its shopper has not confirmed yet. */
export async function choiceUnconfirmed(
  store: Pick<SessionStore, 'readMark'>,
  record: SessionRecord,
): Promise<boolean> {
  return (
    record.awaitsConfirmation === true &&
    record.outcome?.status === 'success' &&
    (await store.readMark(markerKey.choiceConfirmed(record.sessionId))) === undefined
  );
}

/** 403 `bank-step-unconfirmed`, naming `path`: the bank step was not confirmed by its starting browser. */
export function bankStepUnconfirmed(path: string): Error {
  return problem(
    'bank-step-unconfirmed',
    'The bank step of this verification was not completed in the browser that started it, so its account cannot be used.',
    { errors: [{ path, message: 'was not confirmed by the browser that started the verification' }] },
  );
}
