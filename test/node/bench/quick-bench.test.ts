// The quick bench in CI: every section of `npm run bench` at small sizes (each storage-dependent one on
// every storage backend), run as `npm run bench -- --quick` runs it, in a child process. A section that
// throws or hands back no figure fails the run (exit 1), so it fails this test, and the build.
// No aim is checked: the sizes are too small to judge a figure by, and CI machines vary.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_STORAGES, PER_STORAGE_SECTIONS, SECTIONS } from '../../../bench/lib/options.ts';
import { redisSkipReason } from '../../helpers/redis-server.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The quick run's own watchdog stops it at 5 minutes; this is the test's bound beyond that. */
const TIMEOUT_MS = 6 * 60_000;

interface QuickResults {
  mode: string;
  storages: string[];
  rows: { section: string; metric: string; value: string; met?: boolean }[];
  sections: Record<string, unknown>;
  errors: Record<string, string>;
}

/** Runs scripts/bench.sh with `args` (as `npm run bench -- …` does); its exit code and output. */
function runBench(args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['scripts/bench.sh', ...args], {
      cwd: ROOT,
      env: { ...process.env, PATH: `${join(ROOT, 'node_modules/.bin')}:${process.env.PATH ?? ''}`, BENCH_QUICK: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), TIMEOUT_MS - 10_000);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

// Without redis-server (outside CI) the Redis runs are left out, loudly; with CI=true it must be there.
const storages = redisSkipReason() === false ? DEFAULT_STORAGES : DEFAULT_STORAGES.filter((name) => name !== 'redis');

describe('npm run bench -- --quick', { timeout: TIMEOUT_MS }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'obv-quick-bench-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(
    'finishes every section, each storage-dependent one on every storage backend, with figures',
    { timeout: TIMEOUT_MS },
    async () => {
      const out = join(dir, 'results.json');
      const recorded = readFileSync(join(ROOT, 'bench/results.json'), 'utf8');
      const performance = readFileSync(join(ROOT, 'docs/PERFORMANCE.md'), 'utf8');
      const started = Date.now();
      const { code, output } = await runBench(['--quick', '--storage', storages.join(','), '--out', out]);
      // The sections that threw say why early in the output; the tail has the table and the verdict.
      const failures = output
        .split('\n')
        .filter((line) => line.includes(' FAILED: '))
        .map((line) => line.slice(0, 2_000));
      const tail = output.slice(-4_000);
      assert.equal(code, 0, `the quick bench exited ${code}:\n${failures.join('\n')}\n${tail}`);

      const results = JSON.parse(readFileSync(out, 'utf8')) as QuickResults;
      assert.equal(results.mode, 'quick');
      assert.deepEqual(results.errors, {});
      assert.deepEqual(Object.keys(results.sections), [...SECTIONS], 'every section reported');
      for (const section of SECTIONS) {
        const rows = results.rows.filter((row) => row.section === section);
        assert.ok(rows.length > 0, `${section} reported figures`);
        for (const row of rows) assert.doesNotMatch(row.value, /NaN|Infinity/, `${section}: ${row.metric}`);
        if (PER_STORAGE_SECTIONS.includes(section)) {
          for (const storage of storages)
            assert.ok(
              rows.some((row) => row.metric.startsWith(`[${storage}] `)),
              `${section} reported figures on ${storage}`,
            );
        }
      }
      assert.ok(
        results.rows.every((row) => row.met === undefined),
        'a quick run checks no aim',
      );
      // A quick run records nothing.
      assert.equal(readFileSync(join(ROOT, 'bench/results.json'), 'utf8'), recorded);
      assert.equal(readFileSync(join(ROOT, 'docs/PERFORMANCE.md'), 'utf8'), performance);
      console.log(`quick bench: ${((Date.now() - started) / 1000).toFixed(1)} s`);
    },
  );
});
