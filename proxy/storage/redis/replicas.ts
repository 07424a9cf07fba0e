// Money writes that wait for replicas (OBV_REDIS_MIN_REPLICAS): Redis replicates asynchronously, so a
// write it acknowledged can still be missing from the replica a failover promotes. A payment's claim lost
// that way lets the order be charged again; a lost result, outcome or event is an acknowledged fact gone.
// After each such write the proxy sends `WAIT n timeout` and answers "done" only when `n` replicas have
// received it; fewer within the time-out → SessionBackendUnavailableError (503 + Retry-After), never "done".
//
// Why it is sound on a shared, pipelined connection: Redis runs one connection's commands in the order
// sent, and WAIT waits for the replication offset of that connection's LAST write, whatever it was. The
// caller awaits its write's reply before sending WAIT, so the write is at or before that offset: an
// interleaved write of another request can only make WAIT wait for more, never for less.
// Why a connection of its own: a connection blocked in WAIT runs nothing else until it returns, so the
// money writes get their own connection and reads, sessions and counters never queue behind a slow replica.
// Not WAITAOF (Redis 7.2+; it would also wait for the replicas' fsync): WAIT alone is what Redis 7.0 has,
// and what a promotion needs is the replica having the write in memory (it persists it on its own).
import type { Redis } from 'ioredis';
import { SessionBackendUnavailableError } from '../errors.ts';
import { redisCommand } from './errors.ts';

export interface ReplicaWaitOptions {
  /** Replicas that must have each money write before it is acknowledged; 0 waits for none (Redis's default). */
  minReplicas: number;
  /** How long a write waits for them before it is answered 503. */
  timeoutMs: number;
  /** The key {@link MoneyWrites.fence} writes. */
  fenceKey: string;
}

/** Fewer replicas than OBV_REDIS_MIN_REPLICAS received a write in time: it is not acknowledged (503). */
export class ReplicaWaitError extends SessionBackendUnavailableError {
  override name = 'ReplicaWaitError';
}

/** The connection money writes go through, and the wait that follows each of them. */
export class MoneyWrites {
  constructor(
    /** Where money writes are sent: a connection of their own when waiting, else the commands one. */
    readonly redis: Redis,
    readonly options: ReplicaWaitOptions,
  ) {}

  /**
   * Resolves once `minReplicas` replicas have every write this connection sent so far (at once when 0).
   * Call it after the write's reply, on {@link redis}.
   * @throws ReplicaWaitError when fewer received it within the time-out; SessionBackendUnavailableError
   *   when Redis could not be asked.
   */
  async replicated(): Promise<void> {
    const { minReplicas, timeoutMs } = this.options;
    if (minReplicas === 0) return;
    const acknowledged = await redisCommand(this.redis.wait(minReplicas, timeoutMs));
    if (acknowledged < minReplicas) {
      throw new ReplicaWaitError(
        `Redis: ${acknowledged} of the ${minReplicas} replicas asked for (OBV_REDIS_MIN_REPLICAS) received the write within ${timeoutMs} ms, so it is not acknowledged`,
      );
    }
  }

  /**
   * For an answer read rather than written (a replayed payment, an outcome already stored): resolves once
   * the replicas have everything the primary held when it was read, so a retry is never told "done" about
   * a write whose own wait failed. A write on this connection after the read comes after it in the
   * replication stream, and WAIT covers it.
   */
  async fence(): Promise<void> {
    if (this.options.minReplicas === 0) return;
    await redisCommand(this.redis.incr(this.options.fenceKey));
    await this.replicated();
  }
}

/** `connected_slaves` of INFO replication, or undefined when Redis does not say. */
export async function connectedReplicas(redis: Redis): Promise<number | undefined> {
  const info = await redis.info('replication');
  const found = /^connected_slaves:(\d+)/m.exec(info)?.[1];
  return found === undefined ? undefined : Number(found);
}
