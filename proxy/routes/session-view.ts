import type { SessionRecord, SessionState, VerificationOutcome } from '../sessions/types.ts';

/** What the browser sees of a session (CONTRACTS §2). */
export interface SessionView {
  sessionId: string;
  state: SessionState;
  expiresAt: string;
  outcome?: VerificationOutcome;
}

export function sessionView(record: SessionRecord): SessionView {
  const view: SessionView = { sessionId: record.sessionId, state: record.state, expiresAt: new Date(record.expiresAt).toISOString() };
  if (record.outcome) view.outcome = record.outcome;
  return view;
}

/** The answer to a start (CONTRACTS §2): where to send the consumer, and until when. */
export function startView(record: SessionRecord): { sessionId: string; consumerUrl: string; expiresAt: string } {
  return { sessionId: record.sessionId, consumerUrl: record.consumerUrl, expiresAt: new Date(record.expiresAt).toISOString() };
}
