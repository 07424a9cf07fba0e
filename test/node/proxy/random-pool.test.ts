// The pooled random bytes behind ids and sealing IVs (proxy/common/random.ts): each byte handed out once,
// across refills, and a view handed out before a refill keeps its bytes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pooledRandomBytes } from '../../../proxy/common/random.ts';
import { newId } from '../../../proxy/common/ids.ts';
import { createSealer } from '../../../proxy/sealing/sealer.ts';

test('ids never repeat across several refills of the pool', () => {
  const ids = new Set<string>();
  // 4 KiB a pool, 16 bytes an id: 3,000 ids cross the pool's end about a dozen times.
  for (let i = 0; i < 3000; i++) ids.add(newId());
  assert.equal(ids.size, 3000);
  for (const id of ids) assert.match(id, /^[A-Za-z0-9_-]{22}$/);
});

test('a view handed out before a refill keeps its bytes, and consecutive draws do not overlap', () => {
  const first = pooledRandomBytes(16);
  const kept = Buffer.from(first);
  const draws = Array.from({ length: 600 }, () => pooledRandomBytes(13));
  assert.deepEqual(first, kept);
  const seen = new Set(draws.map((bytes) => bytes.toString('hex')));
  assert.equal(seen.size, draws.length);
  // Not the same bytes shifted by one: no byte range is handed out twice.
  for (let i = 1; i < draws.length; i++) assert.notDeepEqual(draws[i]!.subarray(0, 12), draws[i - 1]!.subarray(1, 13));
  assert.equal(pooledRandomBytes(5000).length, 5000);
});

test('two seals of the same value get different IVs', () => {
  const sealer = createSealer([{ id: 'k1', key: Buffer.alloc(32, 7) }]);
  const ivs = new Set(
    Array.from({ length: 500 }, () =>
      Buffer.from(sealer.seal('token', 'ctx').split('.')[2]!, 'base64url').subarray(0, 12).toString('hex'),
    ),
  );
  assert.equal(ivs.size, 500);
});
