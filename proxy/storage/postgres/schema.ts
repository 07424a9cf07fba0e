// The PostgreSQL schema and its migrations: the proxy creates and migrates its own tables at start-up,
// in its own schema (OBV_DATABASE_SCHEMA, default `obv_link`), recording each step in
// `schema_migrations`. Several instances starting at once take turns: the first holds a session-level
// advisory lock on the schema while it migrates, the others wait for it and then find nothing to do.
// A database migrated by a newer release is refused (its tables may mean something this one does not
// know), never written to.
//
// The tables mirror SQLite's (sqlite/database.ts): each record's expiry is a column (epoch ms, the
// proxy's clock), reads skip what has expired, and the housekeeping (housekeeping.ts) deletes it in small
// batches. Records the domain reads whole are JSON text, parsed on the way out (session-codec.ts, the
// records' zod schemas): another instance, maybe of another release, wrote them.
import type { PoolClient } from 'pg';
import { DatabaseSchemaError } from './options.ts';

export { DatabaseSchemaError };

export interface Migration {
  version: number;
  description: string;
  sql: string;
}

/**
 * Version 1: every record kind. The outbox's events carry the id of the transaction that recorded them
 * (`tx`, xid8): the list reads them in (tx, seq) order and only those whose transaction is older than
 * every transaction still open (outbox.ts), so a page never skips an event that commits later with a
 * smaller number. Each job of the outbox is a lease: `due_at` is when it may next be claimed, pushed
 * past now by the claim (`FOR UPDATE SKIP LOCKED`), `leased_by` names the instance holding it.
 */
const VERSION_1 = `
CREATE TABLE sessions (
  session_id text PRIMARY KEY,
  notification_ref text NOT NULL UNIQUE,
  base text NOT NULL,
  state text NOT NULL,
  outcome text,
  expires_at bigint NOT NULL,
  purge_at bigint NOT NULL
);
CREATE INDEX sessions_purge ON sessions (purge_at);
CREATE TABLE idempotency_claims (
  key text PRIMARY KEY,
  session_id text,
  lease_until bigint,
  purge_at bigint NOT NULL
);
CREATE INDEX idempotency_claims_purge ON idempotency_claims (purge_at);
CREATE TABLE markers (
  key text PRIMARY KEY,
  value text NOT NULL,
  purge_at bigint NOT NULL
);
CREATE INDEX markers_purge ON markers (purge_at);
CREATE TABLE link_sessions (
  id text PRIMARY KEY,
  record text NOT NULL,
  uses integer NOT NULL DEFAULT 0,
  purge_at bigint NOT NULL
);
CREATE INDEX link_sessions_purge ON link_sessions (purge_at);
CREATE TABLE payments (
  merchant_transaction_id text PRIMARY KEY,
  payment_id text NOT NULL,
  state text NOT NULL,
  lease_expires_at bigint,
  record text NOT NULL,
  purge_at bigint NOT NULL
);
CREATE INDEX payments_leases ON payments (lease_expires_at) WHERE state = 'pending';
CREATE INDEX payments_purge ON payments (purge_at);
CREATE TABLE payment_keys (
  idempotency_key text PRIMARY KEY,
  merchant_transaction_id text NOT NULL,
  purge_at bigint NOT NULL
);
CREATE INDEX payment_keys_purge ON payment_keys (purge_at);
CREATE TABLE saved_account_removals (
  merchant_user_id text NOT NULL,
  account_id text NOT NULL,
  record text NOT NULL,
  PRIMARY KEY (merchant_user_id, account_id)
);
CREATE TABLE events (
  seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
  id text NOT NULL UNIQUE,
  body text NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  status text NOT NULL,
  created_at bigint NOT NULL,
  next_attempt_at bigint,
  pending_since bigint,
  delivered_at bigint,
  acknowledged_by text,
  last_attempt_at bigint,
  last_error text
);
CREATE INDEX events_order ON events (tx, seq);
CREATE INDEX events_undelivered ON events (tx, seq) WHERE status <> 'delivered';
CREATE INDEX events_pending ON events (pending_since) WHERE status = 'pending';
CREATE INDEX events_retired ON events (created_at) WHERE status <> 'pending';
CREATE TABLE event_jobs (
  job text PRIMARY KEY,
  due_at bigint NOT NULL,
  leased_by text
);
CREATE INDEX event_jobs_due ON event_jobs (due_at);
`;

/**
 * Version 2: what several instances share beyond the records. The relay's session events
 * (`bus_events`: each published event, kept minutes, read by every instance's poll and catch-up after a
 * NOTIFY was missed: bus.ts), and the rate limits' counters (`rate_limits`: a client's budget shared by
 * every instance, rate-limit.ts).
 */
const VERSION_2 = `
CREATE TABLE bus_events (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_id text NOT NULL,
  body text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX bus_events_created ON bus_events (created_at);
CREATE TABLE rate_limits (
  key text PRIMARY KEY,
  hits integer NOT NULL,
  reset_at bigint NOT NULL
);
CREATE INDEX rate_limits_reset ON rate_limits (reset_at);
`;

/**
 * Version 3: an order's earlier payments. A payment the merchant reconciled `not-charged` stays on record;
 * when the order is claimed again it moves here, in the claim's transaction (payments.ts), so a mistaken
 * reconciliation can still be seen (storage/payments.ts).
 */
const VERSION_3 = `
CREATE TABLE earlier_payments (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  merchant_transaction_id text NOT NULL,
  payment_id text NOT NULL,
  record text NOT NULL,
  purge_at bigint NOT NULL
);
CREATE INDEX earlier_payments_order ON earlier_payments (merchant_transaction_id);
CREATE INDEX earlier_payments_purge ON earlier_payments (purge_at);
`;

/**
 * Version 4: each event's user tag, the keyed hash forgetUser finds a user's events by (storage/outbox.ts
 * OutboxCodec), now that bodies are sealed; the outbox seals the bodies written in the clear at start-up
 * (events_clear finds them, empty once they are sealed).
 */
const VERSION_4 = `
ALTER TABLE events ADD COLUMN user_tag text;
CREATE INDEX events_user ON events (user_tag) WHERE user_tag IS NOT NULL;
CREATE INDEX events_clear ON events (seq) WHERE left(body, 1) = '{';
`;

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'sessions, claims, markers, link sessions, payments, removals, the events outbox',
    sql: VERSION_1,
  },
  { version: 2, description: "the relay's session events and shared rate-limit counters", sql: VERSION_2 },
  {
    version: 3,
    description: "an order's earlier payments (each reconciled not-charged, then paid again)",
    sql: VERSION_3,
  },
  { version: 4, description: "each event's user tag (event bodies sealed)", sql: VERSION_4 },
];

export const SCHEMA_VERSION = MIGRATIONS.at(-1)!.version;

/** The first number of the advisory lock every instance takes while it migrates ('obv' in ASCII); the second is the schema's hash. */
const MIGRATION_LOCK_CLASS = 0x6f6276;

export interface MigrationReport {
  from: number;
  to: number;
}

/**
 * Brings `schema` to `target` (default: this release's version) on `client`, under the advisory lock.
 * Each migration is one transaction with its row in `schema_migrations`, so a crash leaves the schema at
 * a version, never between two.
 * @throws DatabaseSchemaError when the schema is newer than this release knows
 */
export async function migrate(client: PoolClient, schema: string, target = SCHEMA_VERSION): Promise<MigrationReport> {
  await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [MIGRATION_LOCK_CLASS, schema]);
  try {
    const exists = await client.query('SELECT 1 FROM pg_namespace WHERE nspname = $1', [schema]);
    // Only when missing: CREATE SCHEMA IF NOT EXISTS asks for the CREATE privilege even when it exists.
    if (exists.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
      version integer PRIMARY KEY, description text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const row = await client.query<{ version: number | null }>(
      `SELECT max(version) AS version FROM ${schema}.schema_migrations`,
    );
    const from = row.rows[0]?.version ?? 0;
    if (from > SCHEMA_VERSION) {
      throw new DatabaseSchemaError(
        `the PostgreSQL schema ${schema} was migrated by a newer obv-link (schema ${from}; this version knows ${SCHEMA_VERSION}): ` +
          'run that version, or restore a backup taken by this one',
      );
    }
    for (const migration of MIGRATIONS) {
      if (migration.version <= from || migration.version > target) continue;
      await client.query('BEGIN');
      try {
        await client.query(`SET LOCAL search_path TO ${schema}`);
        await client.query(migration.sql);
        await client.query(`INSERT INTO ${schema}.schema_migrations (version, description) VALUES ($1, $2)`, [
          migration.version,
          migration.description,
        ]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    }
    return { from, to: Math.max(from, Math.min(target, SCHEMA_VERSION)) };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1, hashtext($2))', [MIGRATION_LOCK_CLASS, schema]);
  }
}
