// The one error a session backend throws for "I cannot be reached right now". It is backend-neutral on
// purpose: http/problem.ts maps it to a 503 with Retry-After without knowing whether sessions live in
// Redis or elsewhere, and a merchant's own SessionStore can throw it to get the same answer.

/**
 * The session store or result bus could not do its work because its backend is unreachable (down,
 * restarting, out of memory, timing out). Transient: the same request may succeed a few seconds later,
 * which is why it becomes `503` + `Retry-After` (the provider retries its notification on it).
 *
 * The message says what failed in words safe to log; connection URLs (which may hold a password) are
 * never part of it.
 */
export class SessionBackendUnavailableError extends Error {
  override name = 'SessionBackendUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * The backend answers but cannot store anything: the disk holding it is full (SQLite's volume). Reads
 * still work. Like an outage it is transient and told once (storage/outage-log.ts), and it becomes `503
 * storage-full` + `Retry-After`; unlike one it usually waits for the operator to free space. Nothing
 * that failed this way was stored, so nothing that failed this way was acknowledged.
 */
export class StorageFullError extends Error {
  override name = 'StorageFullError';
  constructor(
    /** Where the state lives (the data directory): safe to log. */
    readonly location: string,
    /** The bytes left for this user on that volume when the write failed, when known. */
    readonly freeBytes: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(
      `the disk holding ${location} is full (${freeBytes === undefined ? 'free space unknown' : `${freeBytes} bytes free`})`,
      options,
    );
  }
}

/**
 * The backend could not make a write durable: the disk failed an fsync (SQLite's WAL, wal-sync.ts). After
 * a failed fsync the operating system may already have dropped the unwritten pages, so no later fsync can
 * be trusted to cover them: nothing more is acknowledged until the process restarts and SQLite recovers
 * the file from what is on disk. It becomes `503 session-store-unavailable` (the provider retries its
 * notification, at another instance or after the restart) and /readyz answers 503 `failed`.
 */
export class DurabilityError extends Error {
  override name = 'DurabilityError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}
