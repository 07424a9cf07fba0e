// express-rate-limit counters in PostgreSQL, so a client's budget (the start limit, the failed API-key
// limit) is shared by every instance, as on Redis: one upsert per hit, whose window starts again once
// its reset time has passed. Counters past their reset are swept with the other expired rows.
import type { ClientRateLimitInfo, Options, Store } from 'express-rate-limit';
import type { Database } from './database.ts';

export class PostgresRateLimitStore implements Store {
  readonly localKeys = false;
  readonly prefix: string;
  #windowMs = 60_000;

  constructor(
    private readonly db: Database,
    limiterName: string,
    private readonly now: () => number = Date.now,
  ) {
    this.prefix = `${limiterName}:`;
  }

  init(options: Options): void {
    this.#windowMs = options.windowMs;
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    const [row] = await this.db.query<{ hits: number; reset_at: string }>(
      'SELECT hits, reset_at FROM rate_limits WHERE key = $1 AND reset_at > $2',
      [this.prefix + key, this.now()],
    );
    return row && { totalHits: row.hits, resetTime: new Date(Number(row.reset_at)) };
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    const now = this.now();
    const [row] = await this.db.query<{ hits: number; reset_at: string }>(
      `INSERT INTO rate_limits (key, hits, reset_at) VALUES ($1, 1, $2)
      ON CONFLICT (key) DO UPDATE SET
        hits = CASE WHEN rate_limits.reset_at <= $3 THEN 1 ELSE rate_limits.hits + 1 END,
        reset_at = CASE WHEN rate_limits.reset_at <= $3 THEN excluded.reset_at ELSE rate_limits.reset_at END
      RETURNING hits, reset_at`,
      [this.prefix + key, now + this.#windowMs, now],
    );
    return { totalHits: row!.hits, resetTime: new Date(Number(row!.reset_at)) };
  }

  async decrement(key: string): Promise<void> {
    await this.db.query('UPDATE rate_limits SET hits = greatest(hits - 1, 0) WHERE key = $1 AND reset_at > $2', [
      this.prefix + key,
      this.now(),
    ]);
  }

  async resetKey(key: string): Promise<void> {
    await this.db.query('DELETE FROM rate_limits WHERE key = $1', [this.prefix + key]);
  }
}
