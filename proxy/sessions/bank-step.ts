// The bank step bound to the browser that started it (README "Security notes"). A session started with
// a binding holds its success back — no link reference to the page, no onOutcome, no redemption — until
// the return page has been reached by the browser that holds the session's binding cookie
// (http/bank-step-cookie.ts). Otherwise an attacker could send their own consumerUrl to a victim and
// have their link reference backed by the victim's bank account.
import { problem } from '../errors.ts';
import { markerKey, sessionMarkerTtlMs } from './markers.ts';
import type { SessionRecord, SessionStore } from './types.ts';

/** True when `record` needs no confirmation or has it. */
export async function bankStepConfirmed(store: Pick<SessionStore, 'readMark'>, record: SessionRecord): Promise<boolean> {
  if (!record.browserBinding) return true;
  return (await store.readMark(markerKey.bankStepConfirmed(record.sessionId))) !== undefined;
}

/** Records that the starting browser came back (shared by every instance through the store's markers). */
export async function confirmBankStep(store: Pick<SessionStore, 'mark'>, record: SessionRecord, now: number): Promise<void> {
  await store.mark(markerKey.bankStepConfirmed(record.sessionId), 'confirmed', sessionMarkerTtlMs(record, now));
}

/**
 * `record` as a browser may see it: a success whose bank step is not confirmed yet reads as still
 * pending without its outcome (the link reference is withheld), and as expired once its time is up.
 */
export async function releasedRecord(store: Pick<SessionStore, 'readMark'>, record: SessionRecord, now: number): Promise<SessionRecord> {
  if (record.outcome?.status !== 'success' || (await bankStepConfirmed(store, record))) return record;
  const { outcome: _withheld, ...rest } = record;
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
  if (await bankStepConfirmed(store, record)) return;
  throw problem('bank-step-unconfirmed',
    'The bank step of this verification was not completed in the browser that started it, so its account cannot be used.',
    { errors: [{ path, message: 'was not confirmed by the browser that started the verification' }] });
}
