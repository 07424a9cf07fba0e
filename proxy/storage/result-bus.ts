// The result bus: session events to whichever instance holds the browser's socket, and what a browser may
// see of an outcome (`browserOutcome`, the one place a stored outcome is cut down for it). memory/ and
// redis/ implement the bus (SQLite's single instance uses memory's).
import { savingNote } from '../words/saving-notes.ts';
import { accountWords, browserFailureCode, failureWords } from '../words/outcomes.ts';
import type {
  FailureOutcome,
  SessionRecord,
  SessionState,
  SessionStore,
  StoredOutcome,
  VerificationOutcome,
} from './sessions.ts';

/**
 * What a browser may see of an outcome: display fields and the link reference, never the token, plus
 * the shopper-ready words in the verification's language (shopper-words.ts): the account line as shown
 * and as spoken, or the failure's text and the language it is written in.
 * (`accountToken?: never` makes the compiler refuse a stored outcome where this one is expected.)
 */
export type BrowserOutcome =
  | {
      status: 'success';
      linkRef: string;
      accountLabel: string;
      fiName: string;
      fiAccountType: string;
      displayLabel: string;
      spokenLabel: string;
      /** For a returning shopper: the account will be saved, was reconnected, or is another than the one to reconnect. */
      note?: string;
      accountToken?: never;
    }
  | (FailureOutcome & { text: string; lang: string });

/**
 * The one place a stored outcome is cut down for the browser (HTTP, WebSocket and the result bus);
 * `language` is the verification's (`transaction.language`).
 */
export function browserOutcome(
  outcome: VerificationOutcome | StoredOutcome,
  language: string | undefined,
): BrowserOutcome {
  if (outcome.status !== 'success') {
    // The proxy's words only (English in `message`, the shopper's language in `text`): the provider's
    // message stays on the server.
    const code = browserFailureCode(outcome.code);
    return { status: 'failure', code, message: failureWords(code, 'en').text, ...failureWords(code, language) };
  }
  const { linkRef, accountLabel, fiName, fiAccountType } = outcome;
  const note = savingNote(outcome, language);
  return {
    status: 'success',
    linkRef,
    accountLabel,
    fiName,
    fiAccountType,
    ...accountWords(accountLabel, fiAccountType, language),
    ...(note ? { note } : {}),
  };
}

/** A message the relay forwards to every subscriber of one session. */
export type SessionEvent =
  | { type: 'state'; sessionId: string; state: SessionState }
  | { type: 'result'; sessionId: string; outcome: BrowserOutcome }
  | { type: 'expired'; sessionId: string };

/**
 * Fan-out of session events to whichever instance holds the browser's socket. At-most-once (Redis
 * pub/sub is): the store is the source of truth, and the relay reads it on subscribe.
 */
export interface ResultBus {
  /** Rejects with SessionBackendUnavailableError when the backend cannot be reached. */
  publish(event: SessionEvent): Promise<void>;
  /** Returns the function that unsubscribes. Cost per published event must not grow with open sessions. */
  subscribe(sessionId: string, listener: (event: SessionEvent) => void): () => void;
  /**
   * For a bus that catches up on messages it may have missed (Redis, after a reconnect): reads sessions
   * through `sessions` from now on. The relay hands it its own reader, the sessions as a browser may see
   * them (verifications/bank-step.ts `shownReader`), so a catch-up never shows a success held for its
   * bank step; until then it reads the store.
   */
  readThrough?(sessions: Pick<SessionStore, 'get'>): void;
  close(): Promise<void>;
}

/** What a catch-up delivers for a session read again: its result, when it has one. */
export function resultOf(record: SessionRecord | undefined): SessionEvent | undefined {
  return (
    record?.outcome && {
      type: 'result',
      sessionId: record.sessionId,
      outcome: browserOutcome(record.outcome, record.language),
    }
  );
}
