// Memory of the current process after a full collection, so that a difference between two readings is
// what the objects still alive cost, not garbage waiting for the next GC.
import { setTimeout as sleep } from 'node:timers/promises';

export interface MemoryReading {
  rss: number;
  heapUsed: number;
  external: number;
}

/** Collects garbage (children run with --expose-gc) a few times, then reads process.memoryUsage(). */
export async function settledMemory(): Promise<MemoryReading> {
  const collect = (globalThis as { gc?: () => void }).gc;
  if (!collect) throw new Error('settledMemory needs --expose-gc');
  for (let round = 0; round < 3; round++) {
    collect();
    await sleep(100);
  }
  const { rss, heapUsed, external } = process.memoryUsage();
  return { rss, heapUsed, external };
}

/** CPU time this process has used so far, in milliseconds (user + system). */
export function cpuTimeMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}
