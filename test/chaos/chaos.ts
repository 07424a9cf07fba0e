// The chaos run (`npm run chaos`): N verification sessions across K proxy instances on one real
// redis-server or PostgreSQL cluster (`engine`), while deliveries are duplicated, contradicted and sent to
// whichever instance, browsers' sockets drop, one instance is killed (SIGKILL, then restarted) and the
// engine is killed (SIGKILL) and restarted.
// Every session's browser must end with exactly one result, the session's own, equal to what the
// proxy reports for that session. Merchant events ride along: the instances send them to a merchant
// endpoint that fails, drops and delays deliveries (merchant-events.ts); every started session's
// terminal event must arrive, with one effect per event id, and match the session's stored outcome.
//
// The provider's notifications are signed here with the sandbox webhook secret (as the sandbox would)
// rather than driven through the bank page: the run is about delivery, and this keeps 10,000 sessions
// cheap. Verifications are started through the proxies against the sandbox provider, as a page would.
import { isDeepStrictEqual } from 'node:util';
import { WebSocket } from 'ws';
import { startProvider } from '../../sandbox/index.ts';
import { openRedisSessionStore } from '../../proxy/storage/redis/session-store.ts';
import { openPostgresStorage } from '../../proxy/storage/postgres/storage.ts';
import type { SessionStore } from '../../proxy/storage/sessions.ts';
import { seededRandom } from '../helpers/prng.ts';
import { startRedisServer } from '../helpers/redis-server.ts';
import { startPostgresServer } from '../helpers/postgres-server.ts';
import { signNotification } from '../helpers/webhooks.ts';
import { postLinkSession, ProxyProcess, type ChaosInstance } from './cluster.ts';
import { CHAOS_EVENTS_SECRET, startChaosMerchant, type ChaosEvent, type ChaosMerchant } from './merchant-events.ts';
import { lookupSession } from '../helpers/session-requests.ts';

/** Where the instances keep their shared state: a redis-server or a PostgreSQL cluster, each killed and restarted mid-run. */
export type ChaosEngine = 'redis' | 'postgres';

/** One started engine: the instances' settings for it, a session store to check them against, a kill and a restart. */
interface RunningEngine {
  /** How the run's events name it (`SIGKILL {name}`, `{name} restarted`). */
  name: string;
  port: number;
  instanceSettings: { redisUrl?: string; env?: Record<string, string> };
  oracle: Pick<SessionStore, 'get'>;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

async function startEngine(engine: ChaosEngine): Promise<RunningEngine> {
  if (engine === 'postgres') {
    const server = await startPostgresServer();
    const storage = await openPostgresStorage({ url: server.url });
    return {
      name: 'postgres',
      port: server.port,
      instanceSettings: { env: { OBV_DATABASE_URL: server.url } },
      oracle: storage.sessionStore,
      stop: () => server.stop('SIGKILL'),
      start: () => server.start(),
      close: async () => {
        await storage.close();
        await server.close();
      },
    };
  }
  const redis = await startRedisServer({ persistent: true });
  const oracle = await openRedisSessionStore({ url: redis.url });
  oracle.redis.on('error', () => undefined);
  return {
    name: 'redis-server',
    port: redis.port,
    instanceSettings: { redisUrl: redis.url },
    oracle,
    stop: () => redis.stop('SIGKILL'),
    start: () => redis.start(),
    close: async () => {
      oracle.redis.disconnect();
      await redis.close();
    },
  };
}

export interface ChaosOptions {
  sessions: number;
  instances: number;
  /** Where state lives. Default redis. */
  engine?: ChaosEngine;
  /** Sessions in flight at once. Default 64. */
  concurrency?: number;
  seed?: number;
  /** Stop starting new sessions after this long (the run is bounded). Default 120 s + 100 ms a session. */
  timeLimitMs?: number;
  /** Where the instances' logs go. Default test-results/chaos. */
  logDir?: string;
  /** Progress lines. Default: none. */
  progress?: (line: string) => void;
}

export interface ChaosReport {
  sessions: number;
  exactlyOnce: number;
  lost: number;
  duplicated: number;
  crossSession: number;
  /** A result of this session but not the one the proxy stored (or the proxy stored none it was sent). */
  wrongOutcome: number;
  /** Sessions not run because the time limit was reached. */
  notRun: number;
  durationMs: number;
  merchantEvents: {
    /** Distinct event ids whose effect the merchant applied. */
    delivered: number;
    /** Deliveries of an id already applied (redeliveries the merchant de-duplicated). */
    duplicated: number;
    /** Started sessions whose terminal event never arrived. */
    missing: number;
    /** Sessions with more than one terminal event id (two effects for one session). */
    extra: number;
    /** Terminal events that contradict the session's stored outcome, or failed their signature. */
    wrong: number;
  };
  /** What the chaos did, when (ms from the start). */
  events: string[];
  /** Up to 20 examples of violations, for the operator. */
  examples: string[];
}

/** The line: `N sessions, X exactly-once, Y lost, Z duplicated, W cross-session`. */
export function formatReport(report: ChaosReport): string {
  let line = `${report.sessions} sessions, ${report.exactlyOnce} exactly-once, ${report.lost} lost, ${report.duplicated} duplicated, ${report.crossSession} cross-session`;
  if (report.wrongOutcome) line += `, ${report.wrongOutcome} wrong-outcome`;
  if (report.notRun) line += ` (${report.notRun} not run: time limit)`;
  const events = report.merchantEvents;
  line += `; merchant events: ${events.delivered} delivered, ${events.duplicated} duplicated (same id), ${events.missing} missing`;
  if (events.extra) line += `, ${events.extra} extra`;
  if (events.wrong) line += `, ${events.wrong} wrong`;
  return line;
}

export function hasViolations(report: ChaosReport): boolean {
  const events = report.merchantEvents;
  return (
    report.lost + report.duplicated + report.crossSession + report.wrongOutcome + report.notRun > 0 ||
    events.missing + events.extra + events.wrong > 0 ||
    report.exactlyOnce !== report.sessions
  );
}

/** How long a browser waits for its result once every delivery was acknowledged. */
const RESULT_WAIT_MS = 30_000;
/** How long the provider keeps retrying one notification. */
const DELIVERY_WINDOW_MS = 60_000;
/** A start answered later than this is retried under a new idempotency key. */
const START_TIMEOUT_MS = 5_000;
const PROBABILITY = { duplicate: 0.25, conflicting: 0.1, socketDrop: 0.15, failure: 0.3 };
/** Merchant events' timings in the instances: the real schedule's shape, in seconds instead of hours. */
const EVENT_TIMINGS = {
  retryDelaysMs: [200, 400, 800, 1_600, ...Array.from({ length: 40 }, () => 2_000)],
  // Generous for a loaded 2-core machine (a busy run answers slowly); the merchant still delays some
  // answers past it (merchant-events.ts), so time-outs are exercised.
  attemptTimeoutMs: 2_500,
  leaseMs: 6_000,
  pollIntervalMs: 100,
};
/** How long, after the last session, the run waits for the terminal events still being retried. */
const EVENTS_WAIT_MS = 60_000;

type Verdict = 'exactlyOnce' | 'lost' | 'duplicated' | 'crossSession' | 'wrongOutcome';

interface ServerMessage {
  type: string;
  sessionId?: string;
  outcome?: unknown;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export async function runChaos(options: ChaosOptions): Promise<ChaosReport> {
  const started = Date.now();
  const random = seededRandom(options.seed ?? 13);
  const concurrency = Math.max(1, Math.min(options.concurrency ?? 64, options.sessions));
  const timeLimitMs = options.timeLimitMs ?? 120_000 + options.sessions * 100;
  const logDir = options.logDir ?? 'test-results/chaos';
  const events: string[] = [];
  const note = (what: string) => {
    events.push(`${Date.now() - started} ms: ${what}`);
    options.progress?.(`chaos: ${what}`);
  };
  const examples: string[] = [];

  const engine = await startEngine(options.engine ?? 'redis');
  const provider = await startProvider();
  const oracle = engine.oracle;
  const merchant = await startChaosMerchant(seededRandom((options.seed ?? 13) + 1));
  const instances = Array.from(
    { length: Math.max(2, options.instances) },
    (_, i) =>
      new ProxyProcess(`instance-${i + 1}`, {
        providerUrl: provider.url,
        ...(engine.instanceSettings.redisUrl ? { redisUrl: engine.instanceSettings.redisUrl } : {}),
        logDir,
        script: 'test/helpers/events-proxy-child.ts',
        env: {
          ...engine.instanceSettings.env,
          OBV_EVENTS_URL: merchant.url,
          OBV_EVENTS_SECRETS: CHAOS_EVENTS_SECRET,
          TEST_EVENT_TIMINGS: JSON.stringify(EVENT_TIMINGS),
        },
      }),
  );
  /** Marker (the session's merchantTransactionId) → its stored outcome, once known; every started session has an entry. */
  const expected = new Map<string, { status: string; linkRef?: string } | undefined>();
  const chaosTimers: NodeJS.Timeout[] = [];
  try {
    await Promise.all(instances.map((instance) => instance.start()));
    note(`${instances.length} instances up on ${engine.name} :${engine.port}`);

    const pick = (avoid?: ChaosInstance): ChaosInstance | undefined => {
      const live = instances.filter((instance) => instance.up && instance !== avoid);
      const pool = live.length ? live : instances.filter((instance) => instance.up);
      return pool[Math.floor(random() * pool.length)];
    };

    // The chaos itself, triggered by how many sessions have started so that it always hits work in flight.
    let startedCount = 0;
    const killAt = Math.floor(options.sessions * 0.3);
    const engineRestartAt = Math.floor(options.sessions * 0.6);
    const onSessionStarted = () => {
      startedCount++;
      if (startedCount === killAt) {
        const victim = instances[Math.floor(random() * instances.length)]!;
        note(`SIGKILL ${victim.name}`);
        void victim.kill().then(() => {
          chaosTimers.push(
            setTimeout(
              () =>
                void victim.start().then(
                  () => note(`${victim.name} restarted`),
                  (e: unknown) => note(`${victim.name} restart failed: ${String(e)}`),
                ),
              2_000,
            ),
          );
        });
      }
      if (startedCount === engineRestartAt) {
        note(`SIGKILL ${engine.name}`);
        void engine.stop().then(() => {
          chaosTimers.push(
            setTimeout(
              () =>
                void engine.start().then(
                  () => note(`${engine.name} restarted`),
                  (e: unknown) => note(`${engine.name} restart failed: ${String(e)}`),
                ),
              1_500,
            ),
          );
        });
      }
    };

    const counts: Record<Verdict, number> = {
      exactlyOnce: 0,
      lost: 0,
      duplicated: 0,
      crossSession: 0,
      wrongOutcome: 0,
    };
    let next = 0;
    let finished = 0;
    const progressTimer = setInterval(
      () => options.progress?.(`chaos: ${finished}/${options.sessions} sessions done`),
      5_000,
    );
    chaosTimers.push(progressTimer);
    const worker = async () => {
      while (next < options.sessions && Date.now() - started < timeLimitMs) {
        const index = next++;
        const verdict = await runSession(index, {
          pick,
          oracle,
          random,
          onSessionStarted,
          expected,
          example: (line) => examples.length < 20 && examples.push(line),
        });
        counts[verdict]++;
        finished++;
      }
    };
    await Promise.all(Array.from({ length: concurrency }, worker));
    note(`${finished} sessions finished`);
    const merchantEvents = await checkMerchantEvents(
      merchant,
      expected,
      (line) => examples.length < 20 && examples.push(line),
    );
    note(`merchant events checked: ${merchantEvents.delivered} delivered`);
    return {
      sessions: options.sessions,
      ...counts,
      notRun: options.sessions - finished,
      durationMs: Date.now() - started,
      merchantEvents,
      events,
      examples,
    };
  } finally {
    for (const timer of chaosTimers) clearTimeout(timer);
    await Promise.all(instances.map((instance) => instance.kill()));
    await merchant.close();
    await provider.close();
    await engine.close();
  }
}

/**
 * Waits (bounded) until every started session's terminal event had its effect at the merchant, then
 * counts: one effect per session, of the type and link reference the session's stored outcome says.
 */
async function checkMerchantEvents(
  merchant: ChaosMerchant,
  expected: Map<string, { status: string; linkRef?: string } | undefined>,
  example: (line: string) => void,
): Promise<ChaosReport['merchantEvents']> {
  const bySession = () => {
    const ids = new Map<string, ChaosEvent[]>();
    for (const event of merchant.effects.values()) {
      const marker = String(event.data.merchantTransactionId);
      ids.set(marker, [...(ids.get(marker) ?? []), event]);
    }
    return ids;
  };
  const deadline = Date.now() + EVENTS_WAIT_MS;
  while (Date.now() < deadline && [...expected.keys()].some((marker) => !bySession().has(marker))) await sleep(250);
  const sessions = bySession();
  let missing = 0;
  let extra = 0;
  let wrong = merchant.unverified;
  for (const [marker, outcome] of expected) {
    const received = sessions.get(marker) ?? [];
    if (received.length === 0) {
      missing++;
      example(`${marker}: no merchant event`);
      continue;
    }
    if (received.length > 1) {
      extra++;
      example(`${marker}: ${received.length} terminal events (${received.map((event) => event.type).join(', ')})`);
    }
    const [event] = received;
    if (!outcome) continue;
    const type = outcome.status === 'success' ? 'link.succeeded' : 'link.failed';
    if (event!.type !== type || (outcome.linkRef !== undefined && event!.data.linkRef !== outcome.linkRef)) {
      wrong++;
      example(`${marker}: merchant event ${event!.type} but the session stored ${outcome.status}`);
    }
  }
  return { delivered: merchant.effects.size, duplicated: merchant.duplicates, missing, extra, wrong };
}

interface SessionContext {
  pick(avoid?: ChaosInstance): ChaosInstance | undefined;
  oracle: Pick<SessionStore, 'get'>;
  expected: Map<string, { status: string; linkRef?: string } | undefined>;
  random: () => number;
  onSessionStarted(): void;
  example(line: string): void;
}

/** A link session made on `instance` as the merchant's server does; undefined when it should be tried again. */
async function newLinkToken(instance: ChaosInstance, purchase: Record<string, unknown>): Promise<string | undefined> {
  const response = await postLinkSession(instance.url, purchase, AbortSignal.timeout(START_TIMEOUT_MS));
  if (refusedForGood(response))
    throw new Error(`start refused: link session ${response.status} ${await response.text()}`);
  if (response.status !== 201) {
    await response.body?.cancel();
    return undefined;
  }
  return ((await response.json()) as { linkToken: string }).linkToken;
}

/** A 4xx that trying again does not change (not a timeout, not the rate limit). */
function refusedForGood(response: Response): boolean {
  return response.status >= 400 && response.status < 500 && response.status !== 408 && response.status !== 429;
}

/** Retries `attempt` (undefined = not yet) with a short back-off until it gives a value or `windowMs` passes. */
async function retrying<T>(attempt: () => Promise<T | undefined>, windowMs: number): Promise<T | undefined> {
  const deadline = Date.now() + windowMs;
  for (let delay = 50; Date.now() < deadline; delay = Math.min(delay * 2, 1_000)) {
    const value = await attempt().catch((error: unknown) => {
      if (error instanceof Error && error.message.startsWith('start refused')) throw error;
      return undefined;
    });
    if (value !== undefined) return value;
    await sleep(delay * (0.5 + Math.random() / 2));
  }
  return undefined;
}

async function runSession(index: number, ctx: SessionContext): Promise<Verdict> {
  const { pick, random } = ctx;
  // A marker only this session's outcomes carry: any other session's result on this socket shows.
  const marker = `chaos-${index}-${Math.floor(random() * 1e9).toString(36)}`;

  // One idempotency key for retries of a start; a new one when the proxy says that key's first request
  // failed (409) or an answer takes too long (its first request may sit on an instance that was killed
  // mid-start, whose claim only frees after its TTL).
  let idempotencyKey = marker;
  const newKey = () => (idempotencyKey = `${marker}-${Math.floor(Math.random() * 1e9)}`);
  const purchase = {
    merchantUserId: `user-${index}`,
    merchantTransactionId: marker,
    amount: '10.00',
    currency: 'USD',
    consumer: { firstName: 'Chaos', lastName: `Shopper ${index}`, email: `shopper-${index}@example.com` },
  };
  let linkToken: string | undefined;
  const session = await retrying(async () => {
    const instance = pick();
    if (!instance) return undefined;
    // The merchant's server makes the checkout's link session first (on any instance: it lives in Redis).
    linkToken ??= await newLinkToken(instance, purchase);
    if (!linkToken) return undefined;
    const response = await fetch(`${instance.url}/obv/verifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: instance.url, 'idempotency-key': idempotencyKey },
      body: JSON.stringify({ linkToken }),
      signal: AbortSignal.timeout(START_TIMEOUT_MS),
    }).catch((error: unknown) => {
      newKey();
      throw error;
    });
    if (response.status === 409) newKey();
    else if (response.status === 404) {
      // The link session went with a Redis write not yet on disk when Redis was killed: the server makes another.
      linkToken = undefined;
      newKey();
    } else if (refusedForGood(response)) throw new Error(`start refused: ${response.status} ${await response.text()}`);
    if (response.status !== 201) {
      await response.body?.cancel();
      return undefined;
    }
    return (await response.json()) as { sessionId: string };
  }, DELIVERY_WINDOW_MS);
  ctx.onSessionStarted();
  if (!session) {
    ctx.example(`session ${index}: could not be started`);
    return 'lost';
  }
  const { sessionId } = session;
  ctx.expected.set(marker, undefined);
  const ref = await retrying(async () => (await ctx.oracle.get(sessionId))?.notificationRef, DELIVERY_WINDOW_MS);
  if (!ref) {
    ctx.example(`session ${index}: notification reference unreadable`);
    return 'lost';
  }

  const browser = new ChaosBrowser(sessionId, pick);
  try {
    await browser.subscribedOnce(DELIVERY_WINDOW_MS);
    const first = outcomeBody(random() < PROBABILITY.failure ? 'failure' : 'success', marker, 'first');
    const deliveries: Promise<boolean>[] = [];
    const firstId = `msg_${marker}_1`;
    deliveries.push(deliver(pick, ref, firstId, first));
    if (random() < PROBABILITY.conflicting) {
      // A contradicting outcome under another webhook-id, racing the first on another instance.
      deliveries.push(deliver(pick, ref, `msg_${marker}_2`, outcomeBody('failure', marker, 'conflicting')));
    }
    if (random() < PROBABILITY.duplicate) {
      // The same delivery again (a provider that did not see the first 2xx), at once or a moment later.
      const delay = random() < 0.5 ? 0 : Math.floor(random() * 200);
      deliveries.push(sleep(delay).then(() => deliver(pick, ref, firstId, first)));
    }
    if (random() < PROBABILITY.socketDrop) setTimeout(() => browser.drop(), Math.floor(random() * 100));
    const acknowledged = await Promise.all(deliveries);
    if (!acknowledged[0]) ctx.example(`session ${index}: the first delivery was never acknowledged`);

    await browser.result(RESULT_WAIT_MS);
    // A second result would come on the same socket before the relay closes it (or on a late reconnect).
    await browser.settled(2_000);
    const results = browser.results;
    if (results.length === 0) {
      ctx.example(
        `session ${index} (${sessionId.slice(0, 8)}): no result within ${RESULT_WAIT_MS} ms of the acknowledgement; ${browser.sockets} sockets`,
      );
      return 'lost';
    }
    if (results.some((m) => m.sessionId !== sessionId || !JSON.stringify(m.outcome).includes(marker))) {
      ctx.example(`session ${index}: a result of another session`);
      return 'crossSession';
    }
    if (results.length > 1) {
      ctx.example(`session ${index}: ${results.length} results`);
      return 'duplicated';
    }
    const stored = await retrying(async () => {
      const instance = pick();
      if (!instance) return undefined;
      const response = await lookupSession(`${instance.url}/obv`, sessionId, { origin: instance.url });
      if (response.status !== 200) {
        await response.body?.cancel();
        return undefined;
      }
      return (await response.json()) as { outcome?: unknown };
    }, DELIVERY_WINDOW_MS);
    if (!stored || !isDeepStrictEqual(stored.outcome, results[0]!.outcome)) {
      ctx.example(`session ${index}: the socket's result differs from the stored outcome`);
      return 'wrongOutcome';
    }
    ctx.expected.set(marker, stored.outcome as { status: string; linkRef?: string });
    return 'exactlyOnce';
  } finally {
    browser.close();
  }
}

function outcomeBody(kind: 'success' | 'failure', marker: string, which: string): Record<string, unknown> {
  // No verificationId: the run does not know the upstream one, and a wrong one is refused as foreign.
  const base = {
    merchant: { merchantId: 'merchant-chaos', merchantUserId: 'u', merchantTransactionId: marker },
    transaction: { amount: '10.00', currency: 'USD', product: 'ACH' },
  };
  // The marker rides in the code: the browser gets a failure's code but never the provider's message.
  if (kind === 'failure') {
    return {
      ...base,
      verificationStatus: 'FAILURE',
      account: {},
      errorCode: `NOT_VERIFIED.${marker}.${which}`,
      errorMessage: `Not verified (${marker} ${which})`,
    };
  }
  return {
    ...base,
    verificationStatus: 'SUCCESS',
    account: {
      accountToken: `acct_${marker}_${which}`,
      accountLabel: `Checking ${marker} ${which}`,
      fiName: 'Sandbox Federal Bank',
      fiAccountType: 'CHECKING',
    },
  };
}

/** The provider's delivery: the same signed message to whichever instance, retried until a 2xx. */
async function deliver(
  pick: SessionContext['pick'],
  ref: string,
  webhookId: string,
  body: Record<string, unknown>,
): Promise<boolean> {
  const signed = signNotification(body, { id: webhookId });
  const acknowledged = await retrying(async () => {
    const instance = pick();
    if (!instance) return undefined;
    const response = await fetch(`${instance.url}/obv/notifications/${ref}`, {
      method: 'POST',
      headers: signed.headers,
      body: signed.body,
    });
    await response.body?.cancel();
    return response.status >= 200 && response.status < 300 ? true : undefined;
  }, DELIVERY_WINDOW_MS);
  return acknowledged === true;
}

/**
 * A browser's element as far as the socket goes: subscribe on any instance, reconnect elsewhere when
 * the socket ends without a result, stop reconnecting after the first result. Never polls: the run
 * checks the socket path.
 */
class ChaosBrowser {
  readonly results: ServerMessage[] = [];
  sockets = 0;
  #socket: WebSocket | undefined;
  #subscribed = false;
  #closed = false;
  #waiters = new Set<() => void>();

  constructor(
    readonly sessionId: string,
    readonly pick: SessionContext['pick'],
  ) {
    this.#connect();
  }

  #wake(): void {
    for (const waiter of this.#waiters) waiter();
  }

  #until(condition: () => boolean, timeoutMs: number): Promise<void> {
    if (condition()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (!condition()) return;
        clearTimeout(timer);
        this.#waiters.delete(check);
        resolve();
      };
      const timer = setTimeout(() => {
        this.#waiters.delete(check);
        resolve();
      }, timeoutMs);
      this.#waiters.add(check);
    });
  }

  #connect(): void {
    if (this.#closed || this.results.length > 0) return;
    const instance = this.pick();
    if (!instance) {
      setTimeout(() => this.#connect(), 200);
      return;
    }
    this.sockets++;
    const socket = new WebSocket(`${instance.url.replace('http', 'ws')}/obv/ws`, { origin: instance.url });
    this.#socket = socket;
    socket.on('open', () => socket.send(JSON.stringify({ type: 'subscribe', sessionId: this.sessionId })));
    socket.on('message', (data) => {
      let message: ServerMessage;
      try {
        message = JSON.parse(String(data)) as ServerMessage;
      } catch {
        return;
      }
      if (message.type === 'subscribed') this.#subscribed = true;
      if (message.type === 'result') this.results.push(message);
      this.#wake();
    });
    socket.on('error', () => undefined);
    socket.on('close', () => {
      if (this.#socket === socket) this.#socket = undefined;
      this.#wake();
      // Ended without a result (dropped, instance killed, Redis down): the element reconnects.
      if (!this.#closed && this.results.length === 0) setTimeout(() => this.#connect(), 50 + Math.random() * 150);
    });
  }

  subscribedOnce(timeoutMs: number): Promise<void> {
    return this.#until(() => this.#subscribed, timeoutMs);
  }

  result(timeoutMs: number): Promise<void> {
    return this.#until(() => this.results.length > 0, timeoutMs);
  }

  /** Waits until no socket is open (the relay closes it after the result). */
  settled(timeoutMs: number): Promise<void> {
    return this.#until(() => this.#socket === undefined, timeoutMs);
  }

  /** The network drops the socket (no close handshake). */
  drop(): void {
    this.#socket?.terminate();
  }

  close(): void {
    this.#closed = true;
    this.#socket?.terminate();
    this.#wake();
  }
}
