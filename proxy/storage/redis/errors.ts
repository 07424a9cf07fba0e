// Where a failed Redis command becomes SessionBackendUnavailableError. Every command the store, the bus
// and the rate-limit store send goes through `redisCommand`, so "Redis is unreachable" is decided here
// and nowhere else: the routes only see the backend-neutral error.
import { SessionBackendUnavailableError } from '../errors.ts';
import { loadIoredis } from './packages.ts';

// Replies by which a reachable Redis says it cannot serve right now (loading its data set after a
// restart, a replica promoted or cut off, memory full under `noeviction`, a long script running).
// Other replies (WRONGTYPE, a script's own error) are bugs or data problems and stay 500s.
const UNAVAILABLE_REPLY = /^(LOADING|MASTERDOWN|READONLY|OOM|BUSY|TRYAGAIN|CLUSTERDOWN|NOREPLICAS)\b/;

/**
 * True when `error` means Redis could not be used, rather than Redis refusing the command. Every
 * failure that is not a reply from the server is one: the connections fail fast (connection.ts),
 * so a command sent while Redis is down, cut off in flight or left unanswered past the command time-out
 * rejects with ioredis's own errors, and the commands' arguments are built by this code, never invalid.
 */
export function isRedisUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (error instanceof loadIoredis().ReplyError) return UNAVAILABLE_REPLY.test(error.message);
  return true;
}

/** Awaits one Redis command; an unavailable Redis rejects with SessionBackendUnavailableError. */
export async function redisCommand<T>(command: Promise<T>): Promise<T> {
  try {
    return await command;
  } catch (error) {
    if (!isRedisUnavailable(error)) throw error;
    throw new SessionBackendUnavailableError(`Redis is unavailable: ${(error as Error).message}`, { cause: error });
  }
}
