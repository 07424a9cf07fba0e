// Link sessions on SQLite, for one instance.
import { LinkSessionRecord, type LinkSessionStore } from '../link-sessions.ts';
import type { SqliteHandle } from './database.ts';

export class SqliteLinkSessionStore implements LinkSessionStore {
  readonly #now: () => number;
  readonly #statements;

  constructor(handle: SqliteHandle, options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
    this.#statements = {
      insert: handle.db.prepare('INSERT INTO link_sessions (id, record, purge_at) VALUES (?, ?, ?)'),
      get: handle.db.prepare<[string, number], { record: string }>('SELECT record FROM link_sessions WHERE id = ? AND purge_at > ?'),
    };
  }

  async create(id: string, record: LinkSessionRecord, retainMs: number): Promise<void> {
    this.#statements.insert.run(id, JSON.stringify(record), this.#now() + retainMs);
  }

  async get(id: string): Promise<LinkSessionRecord | undefined> {
    const row = this.#statements.get.get(id, this.#now());
    return row && LinkSessionRecord.parse(JSON.parse(row.record));
  }

  async close(): Promise<void> {}
}
