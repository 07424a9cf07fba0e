// A session store outage (Redis down) is something the proxy expects and answers (503, Retry-After,
// 1011 on sockets), so it is logged as one event, not per refused request: one line when the store goes,
// one when it is back, with a count of what was refused meanwhile and no stack. A probe once a second
// while it is down tells when it is back, even if no request comes.
import type { Logger } from 'pino';
import { SessionBackendUnavailableError } from './errors.ts';
import type { SessionStore } from './sessions.ts';

/** What was turned away while the store was down. */
export type RefusedKind = 'requests' | 'subscriptions' | 'readinessProbes' | 'expiryChecks';

/** An id that can never be a session (ids are 22 base64url characters): reading it exercises the store. */
const PROBE_ID = 'outage-probe';
const PROBE_INTERVAL_MS = 1_000;

export class StoreOutageLog {
  #down: { since: number; refused: Record<RefusedKind, number> } | undefined;
  #probe: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly logger: Logger,
    private readonly store: Pick<SessionStore, 'get'>,
    private readonly now: () => number = Date.now,
    private readonly probeIntervalMs = PROBE_INTERVAL_MS,
  ) {}

  /** Whether `error` is the store being unreachable (what this log takes instead of a line of its own). */
  static covers(error: unknown): error is SessionBackendUnavailableError {
    return error instanceof SessionBackendUnavailableError;
  }

  /** Counts one refusal; the first of an outage writes its one line. */
  refused(kind: RefusedKind, error: SessionBackendUnavailableError): void {
    if (!this.#down) {
      this.#down = { since: this.now(), refused: { requests: 0, subscriptions: 0, readinessProbes: 0, expiryChecks: 0 } };
      this.logger.warn({ reason: error.message },
        'session store is unavailable: answering 503 with Retry-After (sockets 1011) until it is back; refusals are counted, not logged one by one');
      this.#armProbe();
    }
    this.#down.refused[kind]++;
  }

  #armProbe(): void {
    if (this.#closed) return;
    this.#probe = setTimeout(() => {
      this.#probe = undefined;
      this.store.get(PROBE_ID).then(() => this.#back(), () => this.#armProbe());
    }, this.probeIntervalMs);
    this.#probe.unref();
  }

  #back(): void {
    const down = this.#down;
    if (!down) return;
    this.#down = undefined;
    const refused = Object.fromEntries(Object.entries(down.refused).filter(([, count]) => count > 0));
    this.logger.info({ downForMs: this.now() - down.since, refused }, 'session store is back');
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#probe);
    this.#probe = undefined;
  }
}
