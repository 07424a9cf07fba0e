// A provider notification's writes as one step (issue 40): the webhook-id's marker, the markers that go
// with the outcome (its link reference; a bound session's arrival time), the settle, and the merchant's
// event with its delivery job. Why one operation on the storage, not an ambient transaction joining every
// write of a tick: each backend can then make exactly these writes atomic its own way (SQLite one
// BEGIN IMMEDIATE … COMMIT and one durable wait, proxy/storage/sqlite/session-store.ts `recordOutcome`;
// PostgreSQL one transaction, proxy/storage/postgres/session-store.ts), and a failure undoes this
// notification's writes only, never another request's, which an ambient transaction could not promise.
// The sequence below is what a backend without its own does (memory, Redis): the same writes, one call
// each, in the order the notification made them before (each idempotent, so a provider retry after a
// failure between them finishes the rest).
import type { MerchantEvent } from './events.ts';
import type { EventOutbox } from './outbox.ts';
import type { SessionStore, SettleResult, StoredOutcome } from './sessions.ts';

/** A marker to set unless it holds a value already (MarkerStore.mark). */
export interface MarkerWrite {
  key: string;
  value: string;
  ttlMs: number;
}

export interface OutcomeWrite {
  sessionId: string;
  /** The outcome as stored (its token sealed). */
  outcome: StoredOutcome;
  /**
   * The webhook-id's marker (its value the session id): when it already holds another session, nothing is
   * written and the result is `conflict` (the provider reused the id for another verification).
   */
  webhook: MarkerWrite;
  /** Set before the settle, whether or not it stores (the link reference's marker). */
  markers: MarkerWrite[];
  /** Only when this call stores the outcome: markers (a bound session's arrival time) and the merchant's event. */
  ifStored?: { markers?: MarkerWrite[]; event?: MerchantEvent | undefined };
  nowMs: number;
}

/** `conflict`: the webhook-id belongs to another session (nothing written); else the settle's result. */
export type OutcomeWriteResult = { conflict: true } | ({ conflict?: false } & SettleResult);

export interface OutcomeWriter {
  /** Durable before it resolves, as `settle`; the event is recorded only when the outcome is stored. */
  recordOutcome(write: OutcomeWrite): Promise<OutcomeWriteResult>;
}

/** The writes one call each, for a backend without an atomic `recordOutcome` of its own. */
export function sequentialOutcomeWriter(
  store: Pick<SessionStore, 'mark' | 'settle'>,
  outbox: Pick<EventOutbox, 'append'>,
): OutcomeWriter {
  const mark = ({ key, value, ttlMs }: MarkerWrite) => store.mark(key, value, ttlMs);
  return {
    async recordOutcome(write) {
      if ((await mark(write.webhook)) !== write.webhook.value) return { conflict: true };
      for (const marker of write.markers) await mark(marker);
      const settled = await store.settle(write.sessionId, write.outcome);
      if (!settled.stored) return settled;
      for (const marker of write.ifStored?.markers ?? []) await mark(marker);
      if (write.ifStored?.event) await outbox.append(write.ifStored.event, write.nowMs);
      return settled;
    },
  };
}
