// ResultBus for one instance: listeners indexed by session id, so publishing costs the same however
// many sessions are open.
import type { ResultBus, SessionEvent } from '../result-bus.ts';

type Listener = (event: SessionEvent) => void;

/** In-memory ResultBus; the default backend. */
export class MemoryResultBus implements ResultBus {
  readonly #listeners = new Map<string, Set<Listener>>();

  async publish(event: SessionEvent): Promise<void> {
    const listeners = this.#listeners.get(event.sessionId);
    if (!listeners) return;
    // Copy: a listener may unsubscribe (close its socket) while we iterate.
    for (const listener of [...listeners]) {
      try {
        listener(event);
      } catch {
        // A failing subscriber must not stop delivery to the others nor fail the publisher.
      }
    }
  }

  subscribe(sessionId: string, listener: Listener): () => void {
    let listeners = this.#listeners.get(sessionId);
    if (!listeners) {
      listeners = new Set();
      this.#listeners.set(sessionId, listeners);
    }
    listeners.add(listener);
    return () => {
      const current = this.#listeners.get(sessionId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.#listeners.delete(sessionId);
    };
  }

  /** Number of sessions with at least one listener (tests check unsubscribe cleans up). */
  get sessionCount(): number {
    return this.#listeners.size;
  }

  async close(): Promise<void> {
    this.#listeners.clear();
  }
}
