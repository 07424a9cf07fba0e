// The benchmark harness's own arithmetic and inputs: a wrong percentile or a mis-signed notification
// would make every figure of `npm run bench` quietly wrong.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { compressedSize } from '../../../bench/lib/compression.ts';
import {
  hasValidSignature,
  signedHeaders,
  successNotification,
  WEBHOOK_SECRET,
} from '../../../bench/lib/notifications.ts';
import { parseOptions } from '../../../bench/lib/options.ts';
import { markdownTable } from '../../../bench/lib/report.ts';
import { overBareRows } from '../../../bench/lib/over-bare.ts';
import { percentile, summarize } from '../../../bench/lib/stats.ts';
import { reachableSteps } from '../../../bench/sections/socket-memory.ts';
import { benchProxyOptions } from '../../../bench/lib/obv-proxy-options.ts';
import { parseProxyConfig } from '../../../proxy/index.ts';

describe('bench statistics', () => {
  it('takes percentiles by nearest rank, so p99 is an observed sample', () => {
    const samples = Array.from({ length: 200 }, (_, index) => index + 1);
    assert.equal(percentile(samples, 50), 100);
    assert.equal(percentile(samples, 99), 198);
    assert.equal(percentile(samples, 100), 200);
    assert.equal(percentile([7], 99), 7);
  });

  it('summarizes unsorted samples', () => {
    const summary = summarize([5, 1, 3, 2, 4]);
    assert.deepEqual(summary, { samples: 5, p50: 3, p99: 5, mean: 3, max: 5 });
  });
});

describe('bench options', () => {
  it('runs every section at full size by default', () => {
    const options = parseOptions([], {});
    assert.equal(options.quick, false);
    assert.deepEqual(options.sections, [
      'size',
      'start',
      'relay',
      'relay-instances',
      'intake',
      'memory',
      'tokens',
      'pay',
      'shopper',
      'returning',
      'growth',
      'outbox',
    ]);
    assert.deepEqual(options.storages, ['memory', 'sqlite', 'redis']);
    assert.equal(options.sizes.idleSockets, 10_000);
    assert.deepEqual(options.sizes.memorySockets, [10_000, 20_000]);
  });

  it('keeps only the sections named by --only, in run order', () => {
    assert.deepEqual(parseOptions(['--only', 'memory,relay'], {}).sections, ['relay', 'memory']);
    assert.deepEqual(parseOptions(['--only=size', '--only', 'tokens'], {}).sections, ['size', 'tokens']);
  });

  it('uses small sizes with BENCH_QUICK=1', () => {
    const options = parseOptions([], { BENCH_QUICK: '1' });
    assert.equal(options.quick, true);
    assert.ok(options.sizes.idleSockets <= 200);
  });

  it('rejects an unknown section by name', () => {
    assert.throws(() => parseOptions(['--only', 'relay,latency'], {}), /unknown section\(s\) latency/);
  });

  it('uses small sizes with --quick, each loop bounded well under the run', () => {
    const options = parseOptions(['--quick'], {});
    assert.equal(options.quick, true);
    assert.ok(options.sizes.loopTimeoutMs <= 15_000);
    assert.ok(options.sizes.runTimeoutMs <= 5 * 60_000);
  });

  it('keeps the storage backends named by --storage, in run order, and refuses others', () => {
    assert.deepEqual(parseOptions(['--storage=redis,memory'], {}).storages, ['memory', 'redis']);
    assert.deepEqual(parseOptions(['--storage', 'sqlite'], {}).storages, ['sqlite']);
    assert.deepEqual(parseOptions(['--storage', 'redis,postgres'], {}).storages, ['postgres', 'redis']);
    assert.throws(() => parseOptions(['--storage', 'mysql'], {}), /unknown storage\(s\) mysql/);
  });

  it('writes a partial run where --out says', () => {
    assert.equal(parseOptions(['--out', '/tmp/x.json'], {}).out, '/tmp/x.json');
    assert.equal(parseOptions([], {}).out, undefined);
    assert.throws(() => parseOptions(['--out'], {}), /--out needs a value/);
  });
});

describe('bench socket counts', () => {
  it('caps each memory step at what one process may hold, without repeating a step', () => {
    assert.deepEqual(reachableSteps([10_000, 20_000], 19_744), [10_000, 19_744]);
    assert.deepEqual(reachableSteps([10_000, 20_000], 5_000), [5_000]);
    assert.deepEqual(reachableSteps([10_000, 20_000], 65_280), [10_000, 20_000]);
  });
});

describe('bench notifications', () => {
  it('signs notifications that the Standard Webhooks library accepts', () => {
    const body = successNotification(3);
    const headers = signedHeaders('msg_test_3', body);
    const verified = new Webhook(WEBHOOK_SECRET).verify(body, headers) as { account: { accountToken: string } };
    assert.equal(verified.account.accountToken, 'acct-bench-3');
  });

  it('accepts in the baseline check what the Standard Webhooks library would accept', () => {
    const body = successNotification(4);
    assert.equal(hasValidSignature(body, signedHeaders('msg_test_4', body)), true);
    assert.equal(
      hasValidSignature(body, { ...signedHeaders('msg_test_4', body), 'webhook-signature': 'v2,abc v1,def' }),
      false,
    );
  });

  it('rejects in the baseline check a changed body, another id or an old timestamp', () => {
    const body = successNotification(5);
    const headers = signedHeaders('msg_test_5', body);
    assert.equal(hasValidSignature(body.replace('acct-bench-5', 'acct-bench-6'), headers), false);
    assert.equal(hasValidSignature(body, { ...headers, 'webhook-id': 'msg_other' }), false);
    const old = Math.floor(Date.now() / 1000) - 600;
    assert.equal(hasValidSignature(body, signedHeaders('msg_test_5', body, old)), false);
    assert.equal(hasValidSignature(body, { 'webhook-id': 'msg_test_5' }), false);
  });

  it('gives every notification a distinct body', () => {
    assert.notEqual(successNotification(1), successNotification(2));
  });
});

describe('bench report', () => {
  it('renders rows as an aligned Markdown table with the aim verdict', () => {
    const table = markdownTable([
      {
        section: 'tokens',
        data: {},
        rows: [
          { metric: 'token requests', value: '1', baseline: '100', comparison: '99 saved', aim: '= 1', met: true },
        ],
      },
      {
        section: 'size',
        data: {},
        rows: [{ metric: 'gzip', value: '12 KB', baseline: '6 KB', comparison: '+6 KB', aim: '≤ 10 KB', met: false }],
      },
    ]).split('\n');
    assert.equal(table.length, 4);
    assert.match(table[0] as string, /^\| metric +\| obv-link \| baseline \| comparison \| aim {2,}\| met \|$/);
    assert.match(table[2] as string, /\| yes \|$/);
    assert.match(table[3] as string, /\| NO {2}\|$/);
    assert.equal(new Set(table.map((line) => line.length)).size, 1);
  });

  it("judges the shopper's figures over the bare page: at most +15 ms at p50 and 1.3× at p99", () => {
    const figures = (p50: number, p99: number) => ({ ...summarize([p50]), p50, p99 });
    const bare = figures(20, 50);
    const [p50, p99] = overBareRows('flow,', figures(35, 65), bare);
    assert.deepEqual([p50?.comparison, p50?.met, p99?.comparison, p99?.met], ['+15.0 ms', true, '1.30×', true]);
    assert.match(p50?.baseline ?? '', /^20\.0 ms bare page$/);
    const [slow50, slow99] = overBareRows('flow,', figures(35.1, 65.1), bare);
    assert.deepEqual([slow50?.met, slow99?.met], [false, false]);
    // Slower than the bare page in absolute terms is not what is judged: the same ratio on a loaded run passes.
    assert.equal(overBareRows('flow,', figures(120, 260), figures(110, 200))[1]?.met, true);
  });
});

describe('bench compression', () => {
  it('reports raw, gzip and brotli sizes of a script', () => {
    const code = Buffer.from('export const answer = 42;\n'.repeat(200));
    const size = compressedSize(code);
    assert.equal(size.raw, code.length);
    assert.ok(size.gzip < size.raw / 10);
    assert.ok(size.brotli < size.raw / 10);
  });
});

describe('the proxy the bench measures', () => {
  it('admits every socket a full run holds at once (the relay and memory sections at full size)', () => {
    const { sizes } = parseOptions([], {});
    const config = parseProxyConfig(benchProxyOptions('http://127.0.0.1:1'));
    const mostSockets = Math.max(sizes.idleSockets + sizes.warmup + sizes.relaySamples, ...sizes.memorySockets);
    assert.ok((config.maxSockets ?? 0) >= mostSockets, `OBV_WS_MAX_TOTAL ${config.maxSockets} < ${mostSockets}`);
    assert.ok(
      config.maxSocketsPerClient >= mostSockets,
      `OBV_WS_MAX_PER_CLIENT ${config.maxSocketsPerClient} < ${mostSockets}`,
    );
  });
});
