// `npm run chaos -- [--sessions N] [--instances K] [--concurrency C] [--seed S] [--engine redis|postgres]`: see chaos.ts.
// Prints `N sessions, X exactly-once, Y lost, Z duplicated, W cross-session; merchant events: D delivered,
// R duplicated (same id), M missing` and exits 1 on any violation.
// `--failover postgres|redis [--orders N] [--async] [--behind MS] [--min-replicas N]`: the failover rehearsal
// instead (failover.ts), its own line of figures, exit 1 on any loss.
import { parseArgs } from 'node:util';
import { formatReport, hasViolations, runChaos } from './chaos.ts';
import { failoverViolations, formatFailoverReport, runFailover } from './failover.ts';
import { durableViolations, formatDurableReport, runDurableChaos } from './durable.ts';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '500' },
    instances: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '64' },
    seed: { type: 'string', default: '13' },
    // Where the instances share their state: redis or postgres.
    engine: { type: 'string', default: 'redis' },
    // One durable instance (SQLite, the default deployment) killed and restarted, instead of a Redis cluster.
    durable: { type: 'boolean', default: false },
    orders: { type: 'string' },
    // The failover rehearsal on a replicated engine (failover.ts): postgres or redis.
    failover: { type: 'string' },
    // With --failover postgres: an asynchronous standby (synchronous_commit = local) instead of a synchronous one.
    async: { type: 'boolean', default: false },
    // With --failover: freeze the standby this many ms before the primary is killed (a standby behind).
    behind: { type: 'string', default: '0' },
    // With --failover redis: OBV_REDIS_MIN_REPLICAS for the instances (money writes wait for the replica).
    'min-replicas': { type: 'string', default: '0' },
  },
});

function positive(name: string, raw: string, max: number): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    console.error(`chaos: --${name} must be an integer from 1 to ${max}`);
    process.exit(2);
  }
  return value;
}

if (values.durable) {
  const durable = await runDurableChaos({
    orders: positive('orders', values.orders ?? '60', 10_000),
    concurrency: positive('concurrency', values.concurrency === '64' ? '8' : values.concurrency, 256),
    progress: (line) => console.log(line),
  });
  for (const example of durable.examples) console.log(`chaos: violation: ${example}`);
  console.log(formatDurableReport(durable));
  process.exit(durableViolations(durable) > 0 ? 1 : 0);
}

if (values.failover !== undefined) {
  if (values.failover !== 'postgres' && values.failover !== 'redis') {
    console.error('chaos: --failover must be postgres or redis');
    process.exit(2);
  }
  const failover = await runFailover({
    engine: values.failover,
    orders: positive('orders', values.orders ?? '150', 10_000),
    concurrency: positive('concurrency', values.concurrency === '64' ? '12' : values.concurrency, 256),
    replication: values.async ? 'asynchronous' : 'synchronous',
    standbyBehindMs: Number(values.behind) > 0 ? positive('behind', values.behind, 60_000) : 0,
    redisMinReplicas: Number(values['min-replicas']) > 0 ? positive('min-replicas', values['min-replicas'], 1) : 0,
    progress: (line) => console.log(line),
  });
  for (const example of failover.examples) console.log(`chaos: violation: ${example}`);
  console.log(formatFailoverReport(failover));
  process.exit(failoverViolations(failover) > 0 ? 1 : 0);
}

if (values.engine !== 'redis' && values.engine !== 'postgres') {
  console.error('chaos: --engine must be redis or postgres');
  process.exit(2);
}

const report = await runChaos({
  engine: values.engine,
  sessions: positive('sessions', values.sessions, 100_000),
  instances: positive('instances', values.instances, 8),
  concurrency: positive('concurrency', values.concurrency, 1_000),
  seed: positive('seed', values.seed, 2 ** 31),
  progress: (line) => console.log(line),
});
for (const example of report.examples) console.log(`chaos: violation: ${example}`);
console.log(`chaos: took ${(report.durationMs / 1000).toFixed(1)} s; instance logs in test-results/chaos/`);
console.log(formatReport(report));
process.exit(hasViolations(report) ? 1 : 0);
