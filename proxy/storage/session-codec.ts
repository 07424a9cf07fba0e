// What a shared backend (Redis, SQLite) reads back is parsed, not trusted: another instance (maybe an older
// or newer version) wrote it, and anything with access to Redis can publish on the events channel.
import { z } from 'zod';
import { RECORD_GRACE_MS } from '../config/limits.ts';
import { ReconnectResultSchema, StoredSavedAccountSchema } from './saved-accounts.ts';
import type { SessionEvent } from './result-bus.ts';
import type { SessionRecord, SessionState, StoredOutcome } from './sessions.ts';

const SessionStateSchema = z.enum(['pending', 'returned', 'succeeded', 'failed', 'expired']);

const FailureOutcomeSchema = z.object({ status: z.literal('failure'), code: z.string(), message: z.string() });
const DisplayFields = { linkRef: z.string(), accountLabel: z.string(), fiName: z.string(), fiAccountType: z.string() };

/** A stored outcome: the token sealed (strict, so a record holding a token in the clear is refused). */
export const StoredOutcomeSchema = z.discriminatedUnion('status', [
  z.strictObject({
    status: z.literal('success'),
    sealedAccountToken: z.string(),
    ...DisplayFields,
    savedAccount: StoredSavedAccountSchema.optional(),
    reconnect: ReconnectResultSchema.optional(),
  }),
  FailureOutcomeSchema,
]);

/** What the events channel may carry: never an accountToken (strict, so one sent by mistake is refused). */
const BrowserOutcomeSchema = z.discriminatedUnion('status', [
  z.strictObject({
    status: z.literal('success'),
    ...DisplayFields,
    displayLabel: z.string(),
    spokenLabel: z.string(),
    note: z.string().optional(),
  }),
  FailureOutcomeSchema.extend({ text: z.string(), lang: z.string() }),
]);

/**
 * The parts of a session that never change after `create`; state and outcome live beside them. Loose, so
 * a field a newer version adds to the record survives a round trip through an older one.
 */
const SessionBaseSchema = z.looseObject({
  sessionId: z.string(),
  notificationRef: z.string(),
  consumerUrl: z.string(),
  createdAt: z.number(),
  expiresAt: z.number(),
  returnRef: z.string().optional(),
  merchantUserId: z.string().optional(),
  merchantTransactionId: z.string().optional(),
  amount: z.string().optional(),
  currency: z.string().optional(),
  verificationId: z.string().optional(),
  language: z.string().optional(),
  linkSessionId: z.string().optional(),
  hosted: z.literal(true).optional(),
  browserBinding: z.string().optional(),
  returnProof: z.string().optional(),
  awaitsConfirmation: z.literal(true).optional(),
});

export const SessionEventSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('state'), sessionId: z.string(), state: SessionStateSchema }),
  z.object({ type: z.literal('result'), sessionId: z.string(), outcome: BrowserOutcomeSchema }),
  z.object({ type: z.literal('expired'), sessionId: z.string() }),
]);

/** The hash fields of one session key. */
export interface SessionFields {
  /** JSON of the immutable part of the record. */
  base: string;
  state: SessionState;
  /** JSON of the outcome, once settled. */
  outcome?: string;
}

/** Splits a record into the hash fields stored under its key. */
export function encodeSession(record: SessionRecord): SessionFields {
  const { state, outcome, ...rest } = record;
  const base = SessionBaseSchema.parse(rest);
  return { base: JSON.stringify(base), state, ...(outcome ? { outcome: JSON.stringify(outcome) } : {}) };
}

/**
 * A new session's row in the SQL stores, SQLite's and PostgreSQL's `sessions` table alike, in the order
 * session_id, notification_ref, base, state, outcome, expires_at, purge_at (RECORD_GRACE_MS past its expiry).
 */
export function sessionRow(
  record: SessionRecord,
): [string, string, string, SessionState, string | null, number, number] {
  const { base, state, outcome } = encodeSession(record);
  const { sessionId, notificationRef, expiresAt } = record;
  return [sessionId, notificationRef, base, state, outcome ?? null, expiresAt, expiresAt + RECORD_GRACE_MS];
}

/**
 * Rebuilds a record from its hash fields.
 * @throws Error when the stored data does not have the expected shape (corrupt or foreign data).
 */
export function decodeSession(base: string, state: string, outcome: string | null | undefined): SessionRecord {
  const record: SessionRecord = {
    ...SessionBaseSchema.parse(JSON.parse(base)),
    state: SessionStateSchema.parse(state),
  };
  if (outcome) record.outcome = StoredOutcomeSchema.parse(JSON.parse(outcome));
  return record;
}

/** Parses a message from the events channel; `undefined` for anything that is not a session event. */
export function decodeEvent(message: string): SessionEvent | undefined {
  let json: unknown;
  try {
    json = JSON.parse(message);
  } catch {
    return undefined;
  }
  const parsed = SessionEventSchema.safeParse(json);
  return parsed.success ? parsed.data : undefined;
}

/** The terminal state an outcome puts its session in. */
export function stateForOutcome(outcome: StoredOutcome): SessionState {
  return outcome.status === 'success' ? 'succeeded' : 'failed';
}
