// How many WebSockets one instance holds at most by default: each is a file descriptor, and when they
// run out nothing else works (starts, notifications, /healthz), so the cap stays below the file limit.
import { readFileSync } from 'node:fs';

/** The process's soft limit on open files (Linux /proc), or undefined where it cannot be read. */
export function openFileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line?.[1] ? Number(line[1]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The default cap on WebSockets per instance: 10,000, or three quarters of the file limit when that is
 * lower, so HTTP requests, upstream calls and Redis keep descriptors when the sockets are at their cap.
 */
export function defaultSocketCap(fileLimit = openFileLimit()): number {
  return fileLimit === undefined ? 10_000 : Math.max(16, Math.min(10_000, Math.floor(fileLimit * 0.75)));
}
