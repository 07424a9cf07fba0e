// The price of sealing merchant events at rest (issue 39 §5) on SQLite: events recorded (`append`, 50 at
// once so the group commit's fsync is shared as under load) and read back (`list`, pages of 100, each
// body opened), on an outbox that seals them (the proxy's: storage/outbox.ts OutboxCodec under a sealing
// key) beside one that keeps them in the clear, each on a fresh data directory of its own, in this
// process. Rounds alternate between the two so a noisy neighbour hits both alike. No aim: the figure is
// what sealing costs, recorded in docs/PERFORMANCE.md.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomEventId } from '../../proxy/events/ids.ts';
import { createOutboxCodec } from '../../proxy/sealing/outbox-codec.ts';
import { buildEvent, type MerchantEvent } from '../../proxy/storage/events.ts';
import { CLEAR_OUTBOX_CODEC, type OutboxCodec } from '../../proxy/storage/outbox.ts';
import { openSqliteStorage, type SqliteStorage } from '../../proxy/storage/sqlite/storage.ts';
import type { BenchOptions } from '../lib/options.ts';
import { formatRatio, type SectionResult } from '../lib/report.ts';
import { nowMs } from '../lib/stats.ts';

/** Appends in flight at once. */
const IN_FLIGHT = 50;
const PAGE = 100;
/** The run stops starting rounds past this, whatever the count. */
const TIME_LIMIT_MS = 60_000;

interface Side {
  name: string;
  storage: SqliteStorage;
  dir: string;
  appendMs: number;
  listMs: number;
  events: number;
  /** The last event recorded: the cursor after which the next round's events are listed. */
  last?: string;
}

/** A `link.succeeded` with a saved account and its consent record: the largest body, the one with the most to hide. */
function linked(index: number, at: number): MerchantEvent {
  const label = `Checking ••••${String(index % 10_000).padStart(4, '0')}`;
  return buildEvent(
    randomEventId(),
    'link.succeeded',
    {
      merchantUserId: `user-${index}`,
      merchantTransactionId: `order-${index}`,
      amount: '49.99',
      currency: 'USD',
      linkRef: `ref-${index}`,
      accountLabel: label,
      fiName: 'Bank',
      fiAccountType: 'CHECKING',
      savedAccount: {
        sealed: `obv1.k1.${'A'.repeat(300)}`,
        accountId: `sa_${index}`,
        accountLabel: label,
        fiName: 'Bank',
        fiAccountType: 'CHECKING',
        linkedAt: new Date(at).toISOString(),
        consent: {
          version: 'v1',
          lang: 'en',
          checkbox: 'Save this account for next time',
          text: 'By saving this account you allow the shop to debit it for future orders you confirm.',
          acceptedAt: new Date(at).toISOString(),
          ip: '203.0.113.7',
          userAgent:
            'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
        },
      },
    },
    at,
  ) as MerchantEvent;
}

function open(name: string, codec: OutboxCodec): Side {
  const dir = mkdtempSync(join(tmpdir(), `obv-bench-outbox-${name}-`));
  return { name, dir, storage: openSqliteStorage(dir, { outboxCodec: codec }), appendMs: 0, listMs: 0, events: 0 };
}

/** One round on `side`: `count` events appended, IN_FLIGHT at a time, then the round's events listed back. */
async function round(side: Side, count: number, first: number): Promise<void> {
  const outbox = side.storage.eventOutbox;
  const at = Date.now();
  const events = Array.from({ length: count }, (_, i) => linked(first + i, at));
  let started = nowMs();
  for (let i = 0; i < events.length; i += IN_FLIGHT)
    await Promise.all(events.slice(i, i + IN_FLIGHT).map((event) => outbox.append(event, at)));
  side.appendMs += nowMs() - started;
  started = nowMs();
  let cursor = side.last;
  let read = 0;
  for (;;) {
    const page = await outbox.list({ limit: PAGE, ...(cursor ? { after: cursor } : {}) }, at);
    if (!page || page.events.length === 0) break;
    read += page.events.length;
    cursor = page.events.at(-1)!.event.id;
    if (!page.hasMore) break;
  }
  side.listMs += nowMs() - started;
  if (read !== count) throw new Error(`outbox bench: listed ${read} of the round's ${count} events (${side.name})`);
  side.events += count;
  side.last = events.at(-1)!.id;
}

export async function measureOutboxSealing(options: BenchOptions): Promise<SectionResult> {
  const rounds = options.quick ? 2 : 10;
  const perRound = options.quick ? 200 : 1_000;
  const sealed = open('sealed', createOutboxCodec([{ id: 'bench', key: randomBytes(32) }]));
  const clear = open('clear', CLEAR_OUTBOX_CODEC);
  const deadline = nowMs() + TIME_LIMIT_MS;
  try {
    for (let r = 0; r < rounds && nowMs() < deadline; r++) {
      // The first of each pair alternates.
      const pair = r % 2 === 0 ? [sealed, clear] : [clear, sealed];
      for (const side of pair) await round(side, perRound, r * perRound);
    }
  } finally {
    for (const side of [sealed, clear]) {
      await side.storage.close();
      rmSync(side.dir, { recursive: true, force: true });
    }
  }
  const rate = (side: Side, ms: number) => (side.events / ms) * 1_000;
  const perSecond = (value: number) => `${Math.round(value).toLocaleString('en-US')} events/s`;
  const rows = (['append', 'list'] as const).map((step) => {
    const ms = (side: Side) => (step === 'append' ? side.appendMs : side.listMs);
    const ratio = rate(sealed, ms(sealed)) / rate(clear, ms(clear));
    return {
      metric: `[sqlite] outbox ${step === 'append' ? `append (${IN_FLIGHT} in flight)` : `list (pages of ${PAGE})`}, events sealed`,
      value: perSecond(rate(sealed, ms(sealed))),
      baseline: `${perSecond(rate(clear, ms(clear)))} in the clear`,
      comparison: formatRatio(ratio),
      aim: '',
    };
  });
  return {
    section: 'outbox',
    rows,
    data: {
      store: 'sqlite',
      rounds,
      perRound,
      sealed: { events: sealed.events, appendMs: sealed.appendMs, listMs: sealed.listMs },
      clear: { events: clear.events, appendMs: clear.appendMs, listMs: clear.listMs },
    },
  };
}
