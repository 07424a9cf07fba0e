// The subscriptions of a bus that may deliver one event more than once (Redis after a reconnect's
// catch-up, PostgreSQL's NOTIFY beside its polling floor): each subscription takes one terminal event
// (a result, or the session's expiry) and nothing after it, so a repeat never reaches a socket twice.
import { sessionLogRef } from '../common/ids.ts';
import type { SessionEvent } from './result-bus.ts';

export type Listener = (event: SessionEvent) => void;

export interface Subscription {
  listener: Listener;
  /** It took its terminal event: later ones pass it by. */
  settled: boolean;
}

/** Hands `event` to each subscription of `set` still open; a listener that throws is logged, not fatal. */
export function dispatchToSubscriptions(
  set: Set<Subscription>,
  event: SessionEvent,
  logger: { warn(fields: object, message: string): void } | undefined,
): void {
  const terminal = event.type !== 'state';
  // A copy: a listener may unsubscribe (close its socket) while this runs.
  for (const subscription of [...set]) {
    if (subscription.settled) continue;
    if (terminal) subscription.settled = true;
    try {
      subscription.listener(event);
    } catch (error) {
      // One broken listener must not keep the event from the others, nor end the process.
      logger?.warn(
        { err: error instanceof Error ? error.message : String(error), session: sessionLogRef(event.sessionId) },
        'session event listener threw',
      );
    }
  }
}
