// Link sessions on SQLite, for one instance. Creating or using one acknowledges nothing durable, so
// neither waits for an fsync (database.ts): a power loss may take back the last moments' link sessions,
// whose checkouts get a new one when their page loads again.
import { LinkSessionRecord, type LinkSessionStore } from '../link-sessions.ts';
import type { SqliteHandle } from './database.ts';
import { prepare } from './driver.ts';

export class SqliteLinkSessionStore implements LinkSessionStore {
  readonly #handle: SqliteHandle;
  readonly #now: () => number;
  readonly #statements;

  constructor(handle: SqliteHandle, options: { now?: () => number } = {}) {
    this.#handle = handle;
    this.#now = options.now ?? Date.now;
    this.#statements = {
      insert: prepare(handle.db, 'INSERT INTO link_sessions (id, record, purge_at) VALUES (?, ?, ?)'),
      get: prepare<[string, number], { record: string }>(
        handle.db,
        'SELECT record FROM link_sessions WHERE id = ? AND purge_at > ?',
      ),
      use: prepare(handle.db, 'UPDATE link_sessions SET uses = uses + 1 WHERE id = ? AND purge_at > ? AND uses < ?'),
      // A scan of the table (no index on the user): an erasure is rare, and the table holds about an hour of checkouts.
      forgetUser: prepare<[string], { record: string }>(
        handle.db,
        "DELETE FROM link_sessions WHERE json_extract(record, '$.merchantUserId') = ? RETURNING record",
      ),
    };
  }

  async create(id: string, record: LinkSessionRecord, retainMs: number): Promise<void> {
    this.#statements.insert.run(id, JSON.stringify(record), this.#now() + retainMs);
  }

  async get(id: string): Promise<LinkSessionRecord | undefined> {
    const row = this.#statements.get.get(id, this.#now());
    return row && LinkSessionRecord.parse(JSON.parse(row.record));
  }

  async use(id: string, max: number): Promise<boolean> {
    return this.#statements.use.run(id, this.#now(), max).changes === 1;
  }

  async forgetUser(merchantUserId: string): Promise<LinkSessionRecord[]> {
    const rows = this.#statements.forgetUser.all(merchantUserId);
    // Erasing acknowledges: it waits for the fsync, unlike a link session's create.
    await this.#handle.synced();
    return rows.map((row) => LinkSessionRecord.parse(JSON.parse(row.record)));
  }

  async close(): Promise<void> {}
}
