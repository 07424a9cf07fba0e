// Link sessions on PostgreSQL, shared by every instance: a start on any instance finds the link session
// the merchant's server made on another, and its uses are counted by one UPDATE whose condition holds
// the maximum, so no two instances can both take the last use.
import { LinkSessionRecord, type LinkSessionStore } from '../link-sessions.ts';
import type { Database } from './database.ts';

export class PostgresLinkSessionStore implements LinkSessionStore {
  readonly #db: Database;
  readonly #now: () => number;

  constructor(db: Database, options: { now?: (() => number) | undefined } = {}) {
    this.#db = db;
    this.#now = options.now ?? Date.now;
  }

  /** @throws Error when the id is taken: an id is never overwritten. */
  async create(id: string, record: LinkSessionRecord, retainMs: number): Promise<void> {
    await this.#db.query('INSERT INTO link_sessions (id, record, purge_at) VALUES ($1, $2, $3)', [
      id,
      JSON.stringify(record),
      this.#now() + retainMs,
    ]);
  }

  async get(id: string): Promise<LinkSessionRecord | undefined> {
    const [row] = await this.#db.query<{ record: string }>(
      'SELECT record FROM link_sessions WHERE id = $1 AND purge_at > $2',
      [id, this.#now()],
    );
    return row && LinkSessionRecord.parse(JSON.parse(row.record));
  }

  async use(id: string, max: number): Promise<boolean> {
    const rows = await this.#db.query(
      'UPDATE link_sessions SET uses = uses + 1 WHERE id = $1 AND purge_at > $2 AND uses < $3 RETURNING 1 AS one',
      [id, this.#now(), max],
    );
    return rows.length === 1;
  }

  /** A scan of the table (no index on the user): an erasure is rare, and the table holds about an hour of checkouts. */
  async forgetUser(merchantUserId: string): Promise<LinkSessionRecord[]> {
    const rows = await this.#db.query<{ record: string }>(
      "DELETE FROM link_sessions WHERE record::jsonb ->> 'merchantUserId' = $1 RETURNING record",
      [merchantUserId],
    );
    return rows.map((row) => LinkSessionRecord.parse(JSON.parse(row.record)));
  }

  async close(): Promise<void> {}
}
