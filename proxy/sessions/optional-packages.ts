// ioredis and rate-limit-redis are optional dependencies: only the Redis backend (OBV_REDIS_URL) needs
// them, so a single in-memory instance runs without them installed. They load on first use, with a
// message naming the package to install when one is missing. Both are CommonJS packages, so a
// synchronous require lets `createSessionBackend` (and so `createObvProxy`) fail at once, synchronously.
import { createRequire } from 'node:module';

const requireOptional = createRequire(import.meta.url);

/** The packages the Redis backend loads. */
export const REDIS_PACKAGES = ['ioredis', 'rate-limit-redis'] as const;

/** The package `name`. @throws Error naming the package to install when it is missing. */
export function loadOptionalPackage<T>(name: (typeof REDIS_PACKAGES)[number]): T {
  try {
    return requireOptional(name) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(`OBV_REDIS_URL is set but the optional dependency ${name} is not installed (npm install ${name})`, { cause: error });
  }
}
