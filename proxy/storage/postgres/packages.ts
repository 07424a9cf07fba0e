// `pg` (node-postgres) is an optional dependency, as ioredis is: it loads on first use, which only the
// PostgreSQL backend (OBV_DATABASE_URL) makes, so an instance on SQLite runs without it installed. It is
// a CommonJS package, so a synchronous require keeps `createObvProxy` synchronous.
import { createRequire } from 'node:module';
import type * as Pg from 'pg';

const requireOptional = createRequire(import.meta.url);

export function loadPg(): typeof Pg {
  try {
    return requireOptional('pg') as typeof Pg;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error('OBV_DATABASE_URL is set but the optional dependency pg is not installed (npm install pg)', {
      cause: error,
    });
  }
}
