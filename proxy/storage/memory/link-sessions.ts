// Link sessions in memory (tests, and sandbox mode when chosen).
import type { LinkSessionRecord, LinkSessionStore } from '../link-sessions.ts';

export class MemoryLinkSessionStore implements LinkSessionStore {
  readonly #sessions = new Map<string, { record: LinkSessionRecord; retainUntil: number; uses: number }>();
  readonly #now: () => number;

  constructor(options: { now?: () => number } = {}) {
    this.#now = options.now ?? Date.now;
  }

  async create(id: string, record: LinkSessionRecord, retainMs: number): Promise<void> {
    this.#sweep();
    if (this.#sessions.has(id)) throw new Error('link session id already exists');
    this.#sessions.set(id, { record: structuredClone(record), retainUntil: this.#now() + retainMs, uses: 0 });
  }

  async get(id: string): Promise<LinkSessionRecord | undefined> {
    const entry = this.#sessions.get(id);
    return entry && entry.retainUntil > this.#now() ? structuredClone(entry.record) : undefined;
  }

  async use(id: string, max: number): Promise<boolean> {
    const entry = this.#sessions.get(id);
    if (!entry || entry.retainUntil <= this.#now() || entry.uses >= max) return false;
    entry.uses++;
    return true;
  }

  async forgetUser(merchantUserId: string): Promise<LinkSessionRecord[]> {
    const forgotten: LinkSessionRecord[] = [];
    for (const [id, entry] of this.#sessions) {
      if (entry.record.merchantUserId !== merchantUserId) continue;
      this.#sessions.delete(id);
      forgotten.push(entry.record);
    }
    return forgotten;
  }

  async close(): Promise<void> {
    this.#sessions.clear();
  }

  /** Drops what is past its retention (cheap: insertion order is retention order for one TTL). */
  #sweep(): void {
    const now = this.#now();
    for (const [id, entry] of this.#sessions) {
      if (entry.retainUntil > now) break;
      this.#sessions.delete(id);
    }
  }
}
