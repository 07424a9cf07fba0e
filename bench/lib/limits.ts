// How many sockets one process may hold: its open-file limit less headroom for the listener, stdio,
// the IPC channel and libuv's own descriptors. The npm script raises the soft limit to the hard one.
import { readFileSync } from 'node:fs';

const HEADROOM = 256;

/** The soft RLIMIT_NOFILE of this process (children inherit it), or 1024 where /proc is absent. */
export function openFileLimit(): number {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((entry) => entry.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    return soft === 'unlimited' ? 1_048_576 : Number(soft) || 1024;
  } catch {
    return 1024;
  }
}

/** Sockets one process can keep open. */
export function socketsPerProcess(): number {
  return openFileLimit() - HEADROOM;
}
