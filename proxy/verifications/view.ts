import { browserOutcome, type BrowserOutcome } from '../storage/result-bus.ts';
import { type SessionRecord, type SessionState } from '../storage/sessions.ts';
import { BANK_STEP_WORDS } from '../words/bank-step.ts';

/** What the browser sees of a session (CONTRACTS §2). */
export interface SessionView {
  sessionId: string;
  state: SessionState;
  expiresAt: string;
  /** Display fields and the link reference, or the failure: never the accountToken. */
  outcome?: BrowserOutcome;
}

export function sessionView(record: SessionRecord): SessionView {
  const view: SessionView = {
    sessionId: record.sessionId,
    state: record.state,
    expiresAt: new Date(record.expiresAt).toISOString(),
  };
  if (record.outcome) view.outcome = browserOutcome(record.outcome, record.language);
  return view;
}

/** The answer to a start (CONTRACTS §2): where to send the consumer, until when, and the element's words for what follows. */
export function startView(record: SessionRecord): {
  sessionId: string;
  consumerUrl: string;
  expiresAt: string;
  words: typeof BANK_STEP_WORDS;
} {
  return {
    sessionId: record.sessionId,
    consumerUrl: record.consumerUrl,
    expiresAt: new Date(record.expiresAt).toISOString(),
    words: BANK_STEP_WORDS,
  };
}
