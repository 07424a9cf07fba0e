// Whether a Redis keeps what it acknowledged across its own restart: the proxy answers "done" once Redis
// has a write, so a Redis without its append-only file would lose acknowledged payments and sessions when
// it restarts. Read from INFO persistence (allowed where CONFIG GET often is not, on managed Redis).
import type { Redis } from 'ioredis';

export interface RedisPersistence {
  persistent: boolean;
  /** What was found, in words for a log line or `npx obv-link-proxy doctor`. */
  detail: string;
}

/** The append-only file's state on `redis` (a connected client). */
export async function redisPersistence(redis: Redis): Promise<RedisPersistence> {
  const info = await redis.info('persistence');
  const field = (name: string) => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  if (field('aof_enabled') === '1') return { persistent: true, detail: 'appendonly yes' };
  return {
    persistent: false,
    detail:
      'appendonly is off: a Redis restart would lose what the proxy acknowledged (payments, sessions, events); set appendonly yes',
  };
}
