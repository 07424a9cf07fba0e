// The Redis client is an optional dependency (docs/SEVERAL-INSTANCES.md): a proxy without OBV_REDIS_URL must never
// load ioredis or rate-limit-redis, so `npm install --omit=optional` runs a single instance. Checked in a
// child process that builds a proxy, serves one request, closes it and lists the packages it loaded.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const REDIS_PACKAGES = /\/node_modules\/(ioredis|rate-limit-redis)\//;

async function packagesLoaded(redisUrl?: string): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'obv-module-loads-'));
  try {
    const log = join(dir, 'loaded.txt');
    await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'test/helpers/build-proxy-child.ts', ...(redisUrl ? [redisUrl] : [])],
      { env: { ...process.env, OBV_MODULE_LOAD_LOG: log }, timeout: 60_000 },
    );
    return readFileSync(log, 'utf8').split('\n').filter(Boolean);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a proxy without OBV_REDIS_URL loads neither ioredis nor rate-limit-redis', async () => {
  const loaded = await packagesLoaded();
  assert.ok(
    loaded.some((path) => path.includes('/node_modules/express/')),
    'the child listed the packages it loaded',
  );
  assert.deepEqual(
    loaded.filter((path) => REDIS_PACKAGES.test(path)),
    [],
  );
});

test('a proxy with OBV_REDIS_URL loads both', async () => {
  const loaded = (await packagesLoaded('redis://127.0.0.1:9')).filter((path) => REDIS_PACKAGES.test(path));
  assert.ok(
    loaded.some((path) => path.includes('/node_modules/ioredis/')),
    'ioredis loaded',
  );
  assert.ok(
    loaded.some((path) => path.includes('/node_modules/rate-limit-redis/')),
    'rate-limit-redis loaded',
  );
});
