// A storage outage — the session store unreachable (Redis down), or its disk full (SQLite) — is
// something the proxy expects and answers (503, Retry-After, 1011 on sockets), so it is logged as one
// event, not per refused request: one line when it starts, one when it is over, with a count of what
// was refused meanwhile and no stack. A write probe once a second while it lasts tells when it is over,
// even if no request comes: a write, because a full disk still answers reads.
import type { Logger } from 'pino';
import { DurabilityError, SessionBackendUnavailableError, StorageFullError } from './errors.ts';
import { markerKey } from './markers.ts';
import type { SessionStore } from './sessions.ts';

/** What was turned away while the store was down. */
export type RefusedKind = 'requests' | 'subscriptions' | 'readinessProbes' | 'expiryChecks' | 'eventJobs';

/** The errors an outage consists of. */
export type OutageError = SessionBackendUnavailableError | StorageFullError | DurabilityError;

const PROBE_INTERVAL_MS = 1_000;
/** The probe's marker lives this long, so the next probe finds it expired and writes again. */
const PROBE_TTL_MS = 1;

/**
 * One tiny write to the store (a marker that expires at once): resolves when the store can take a write
 * now, rejects as a write would. What /readyz and the outage log ask.
 */
export async function probeWrite(store: Pick<SessionStore, 'mark'>, now: number): Promise<void> {
  await store.mark(markerKey.writeProbe, String(now), PROBE_TTL_MS);
}

export class StoreOutageLog {
  #down: { since: number; full: boolean; refused: Record<RefusedKind, number> } | undefined;
  #probe: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(
    private readonly logger: Logger,
    private readonly store: Pick<SessionStore, 'mark'>,
    private readonly now: () => number = Date.now,
    private readonly probeIntervalMs = PROBE_INTERVAL_MS,
  ) {}

  /** Whether `error` is the store being unreachable or full (what this log takes instead of a line of its own). */
  static covers(error: unknown): error is OutageError {
    return (
      error instanceof SessionBackendUnavailableError ||
      error instanceof StorageFullError ||
      error instanceof DurabilityError
    );
  }

  /** Counts one refusal; the first of an outage writes its one line. */
  refused(kind: RefusedKind, error: OutageError): void {
    if (!this.#down) {
      const full = error instanceof StorageFullError;
      this.#down = {
        since: this.now(),
        full,
        refused: { requests: 0, subscriptions: 0, readinessProbes: 0, expiryChecks: 0, eventJobs: 0 },
      };
      if (error instanceof DurabilityError) {
        // Not transient: the write probe fails too until a restart, so there is no "back" line before one.
        this.logger.error(
          { reason: error.message },
          'storage cannot make writes durable (a failed fsync): answering 503 with Retry-After and /readyz 503; restart the proxy once the disk is checked; ' +
            'refusals are counted, not logged one by one',
        );
      } else if (full) {
        this.logger.error(
          { location: error.location, freeBytes: error.freeBytes },
          'storage is full: answering writes 503 storage-full with Retry-After, /readyz 503, until space returns; free space on the volume ' +
            'holding the data directory and the proxy resumes by itself; refusals are counted, not logged one by one',
        );
      } else {
        this.logger.warn(
          { reason: error.message },
          'session store is unavailable: answering 503 with Retry-After (sockets 1011) until it is back; refusals are counted, not logged one by one',
        );
      }
      this.#armProbe();
    }
    this.#down.refused[kind]++;
  }

  #armProbe(): void {
    if (this.#closed) return;
    this.#probe = setTimeout(() => {
      this.#probe = undefined;
      probeWrite(this.store, this.now()).then(
        () => this.#back(),
        () => this.#armProbe(),
      );
    }, this.probeIntervalMs);
    this.#probe.unref();
  }

  #back(): void {
    const down = this.#down;
    if (!down) return;
    this.#down = undefined;
    const refused = Object.fromEntries(Object.entries(down.refused).filter(([, count]) => count > 0));
    this.logger.info(
      { downForMs: this.now() - down.since, refused },
      down.full ? 'storage takes writes again' : 'session store is back',
    );
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#probe);
    this.#probe = undefined;
  }
}
