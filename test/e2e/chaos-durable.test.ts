// The durable single instance's chaos run, small enough for CI: one `npm start` process on SQLite takes
// real checkouts (the sandbox bank, notifications with retries, payments with Idempotency-Keys) and is
// killed with SIGKILL twice while they are in flight — between a notification stored and its answer,
// a payment sent and its record, an event recorded and delivered. `npm run chaos -- --durable --orders
// 500` is the full run.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { durableViolations, formatDurableReport, runDurableChaos } from '../chaos/durable.ts';

describe('chaos run on one durable instance', () => {
  it(
    'charges no order twice and loses no outcome, payment or event through two SIGKILLs',
    { timeout: 240_000 },
    async () => {
      const report = await runDurableChaos({
        orders: 40,
        concurrency: 8,
        timeLimitMs: 120_000,
        logDir: 'test-results/chaos-durable-ci',
      });
      const line = formatDurableReport(report);
      assert.equal(durableViolations(report), 0, `${line}\n${report.examples.join('\n')}`);
      assert.equal(report.kills, 2, line);
      assert.equal(report.notRun, 0, line);
      // Most checkouts end paid; a payment cut before the provider saw it ends reconciled as not charged.
      assert.ok(report.paid > report.orders / 2, line);
    },
  );
});
