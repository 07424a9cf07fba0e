// The chaos run on PostgreSQL, small enough for CI: three `npm start` instances sharing a throw-away
// cluster (no Redis), with duplicate and conflicting deliveries, dropped sockets, an instance killed and
// PostgreSQL SIGKILLed and restarted, and a merchant events endpoint that fails, drops and delays
// deliveries. `npm run chaos -- --engine postgres --sessions 3000` is the full run (CONTRIBUTING.md).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatReport, hasViolations, runChaos } from '../../chaos/chaos.ts';
import { postgresSkipReason } from '../../helpers/postgres-server.ts';

describe('chaos run on PostgreSQL', { skip: postgresSkipReason() }, () => {
  it(
    "delivers every session's result exactly once, and its merchant event, through kills, a database restart, drops and duplicates",
    { timeout: 240_000 },
    async () => {
      const report = await runChaos({
        engine: 'postgres',
        sessions: 60,
        instances: 3,
        concurrency: 16,
        timeLimitMs: 150_000,
        logDir: 'test-results/chaos-postgres',
      });
      const line = formatReport(report);
      assert.equal(hasViolations(report), false, `${line}\n${report.examples.join('\n')}`);
      assert.match(
        line,
        /^60 sessions, 60 exactly-once, 0 lost, 0 duplicated, 0 cross-session; merchant events: 60 delivered, \d+ duplicated \(same id\), 0 missing$/,
      );
      for (const event of ['SIGKILL instance-', 'SIGKILL postgres', 'postgres restarted']) {
        assert.ok(
          report.events.some((e) => e.includes(event)),
          `${event} missing from ${report.events.join('; ')}`,
        );
      }
    },
  );
});
