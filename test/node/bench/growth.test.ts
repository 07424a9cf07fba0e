// The growth section (bench/sections/growth.ts) at a tiny size: its fill leaves what a shop's checkouts
// leave (each record kind, in the numbers one checkout makes), its pruning removes what is past its
// retention eight days on and keeps the payments, and its rows check the 50 ms aim on the right figure.
// A fill that wrote nothing, or a prune that pruned nothing, would make its figures quietly wrong.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DatabaseSync } from 'node:sqlite';
import { parseOptions } from '../../../bench/lib/options.ts';
import { BenchChild, killAllChildren } from '../../../bench/lib/rpc.ts';
import { AIM_BLOCK_MS, dataDirBytes, growthRows, type GrowthFigures } from '../../../bench/sections/growth.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';

const DAY_MS = 24 * 3_600_000;
const dirs: string[] = [];
after(() => {
  killAllChildren();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function counts(dataDir: string): Record<string, number> {
  const db = new DatabaseSync(join(dataDir, DATABASE_FILE), { readOnly: true });
  try {
    const tables = [
      'sessions',
      'idempotency_claims',
      'markers',
      'link_sessions',
      'payments',
      'payment_keys',
      'events',
      'event_jobs',
    ];
    return Object.fromEntries(
      tables.map((table) => [table, Number(db.prepare(`SELECT count(*) AS n FROM ${table}`).get()!.n)]),
    );
  } finally {
    db.close();
  }
}

describe('bench growth section', () => {
  it(
    'fills a file with whole checkouts through the storage layer, and prunes all but the payments eight days on',
    { timeout: 120_000 },
    async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'obv-growth-test-'));
      dirs.push(dataDir);
      const child = await BenchChild.spawn('growth-proxy.ts', 'growth-proxy', { quiet: true });
      try {
        const fill = await child.call<{ filled: number; endAt: number; eventIds: string[] }>('fill', {
          dataDir,
          checkouts: 100,
          startAt: Date.UTC(2026, 0, 1),
          timeLimitMs: 60_000,
        });
        assert.equal(fill.filled, 100);
        assert.ok(fill.eventIds.length >= 2, 'event ids to page from');
        // Per checkout: a session, its start's claim, three markers, a link session, a payment and its key,
        // two events (delivered: no job left).
        assert.deepEqual(counts(dataDir), {
          sessions: 100,
          idempotency_claims: 100,
          markers: 300,
          link_sessions: 100,
          payments: 100,
          payment_keys: 100,
          events: 200,
          event_jobs: 0,
        });
        const before = dataDirBytes(dataDir);
        const pruned = await child.call<{
          deleted: number;
          steps: number;
          longestStepMs: number;
          vacuumedPages: number;
        }>('prune', { dataDir, now: fill.endAt + 8 * DAY_MS });
        assert.equal(pruned.deleted, 100 + 100 + 300 + 100 + 200);
        assert.deepEqual(counts(dataDir), {
          sessions: 0,
          idempotency_claims: 0,
          markers: 0,
          link_sessions: 0,
          payments: 100,
          payment_keys: 100,
          events: 0,
          event_jobs: 0,
        });
        assert.ok(
          pruned.vacuumedPages > 0 && dataDirBytes(dataDir) < before,
          'the freed pages went back to the file system',
        );
        assert.ok(pruned.steps > 0 && pruned.longestStepMs > 0);
      } finally {
        await child.close();
      }
    },
  );

  it('checks the 50 ms aim on the longest block of pruning and of serving pages, and reports sizes as measured', () => {
    const summary = { samples: 10, p50: 2, p99: 9, mean: 3, max: 9 };
    const figures = (pruneMs: number, servingMs: number): GrowthFigures => ({
      checkouts: 20_000,
      fillSeconds: 60,
      bytesBefore: 80 * 1_048_576,
      bytesAfter: 20 * 1_048_576,
      startMs: 30,
      emptyStartMs: 25,
      pages: { all: summary, undelivered: summary },
      servingLoopDelayMaxMs: servingMs,
      machineStallMs: { serving: 3, pruning: 4 },
      prune: {
        openMs: 10,
        ms: 5_000,
        deleted: 160_000,
        vacuumedPages: 15_000,
        checkpointed: true,
        steps: 600,
        longestStepMs: pruneMs,
        longestStep: 'delete sessions',
        longestStepCpuMs: 5,
        checkpoints: 300,
        longestCheckpointMs: 120,
        loopDelayMaxMs: pruneMs,
      },
    });
    const aims = (rows: ReturnType<typeof growthRows>) =>
      rows.filter((row) => row.met !== undefined).map((row) => row.met);
    assert.deepEqual(aims(growthRows(figures(AIM_BLOCK_MS, AIM_BLOCK_MS))), [true, true]);
    assert.deepEqual(aims(growthRows(figures(AIM_BLOCK_MS + 1, 10))), [false, true]);
    assert.deepEqual(aims(growthRows(figures(10, AIM_BLOCK_MS + 1))), [true, false]);
    const [size] = growthRows(figures(10, 10));
    assert.equal(size!.value, '80.0 MB');
    assert.match(size!.baseline, /^20\.0 MB after/);
    assert.equal(size!.comparison, '−75 %');
  });

  it('runs 20,000 and 200,000 checkouts at full size, and a tiny file with --quick', () => {
    assert.deepEqual(parseOptions([], {}).sizes.growthCheckouts, [20_000, 200_000]);
    const quick = parseOptions(['--quick'], {}).sizes;
    assert.ok(
      quick.growthCheckouts.every((checkouts) => checkouts <= 500),
      'a quick run stays short',
    );
  });
});
