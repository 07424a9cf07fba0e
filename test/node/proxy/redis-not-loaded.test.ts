// The README promises that without OBV_REDIS_URL no Redis code is loaded: a proxy built, serving and
// closed in a child process that records every module it loads, with and without a Redis URL.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const REDIS_MODULES = /\/proxy\/sessions\/redis\//;

async function modulesLoaded(redisUrl?: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'obv-module-loads-'));
  try {
    const log = join(dir, 'loaded.txt');
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', '--import', './test/helpers/module-loads/register.ts', 'test/helpers/module-loads/build-proxy.ts', ...(redisUrl ? [redisUrl] : [])],
      { env: { ...process.env, OBV_MODULE_LOAD_LOG: log }, timeout: 60_000 },
    );
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a proxy without OBV_REDIS_URL loads no module under proxy/sessions/redis/', async () => {
  const loaded = await modulesLoaded();
  assert.ok(loaded.some((url) => url.endsWith('/proxy/sessions/create-backend.ts')), 'the recorder saw the proxy load');
  assert.deepEqual(loaded.filter((url) => REDIS_MODULES.test(url)), []);
});

test('a proxy with OBV_REDIS_URL loads the Redis backend', async () => {
  const loaded = await modulesLoaded('redis://127.0.0.1:9');
  assert.ok(loaded.some((url) => url.endsWith('/proxy/sessions/redis/backend.ts')), loaded.filter((url) => url.includes('/proxy/')).join('\n'));
});
