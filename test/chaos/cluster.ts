// The chaos run's deployment: K proxy instances started as an operator would (`proxy/cli.ts`, i.e.
// `npm start`, configured by environment) on one real redis-server, each killable with SIGKILL and
// restartable. Instance logs (warnings and errors) go to files, for reading after a run.
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_WEBHOOK_SECRET } from '../../sandbox/index.ts';
import { freePort } from '../helpers/free-port.ts';

export interface ChaosInstance {
  readonly name: string;
  /** `http://127.0.0.1:{port}`; a restart gets a new port. */
  url: string;
  /** False from the moment it is being killed until its restart answers. */
  up: boolean;
}

export interface InstanceSettings {
  providerUrl: string;
  /** Redis for several instances; without it each instance keeps its state in SQLite (OBV_DATA_DIR in `env`). */
  redisUrl?: string;
  /**
   * Restart on the same port: the URLs the provider was given (notifications, returns) keep reaching it,
   * as behind a load balancer or a service name.
   */
  keepPort?: boolean;
  logDir: string;
  /** More environment (merchant events' OBV_EVENTS_URL, …); wins over the defaults below. */
  env?: Record<string, string>;
  /**
   * The entry point; default proxy/cli.ts. test/helpers/events-proxy-child.ts is the same `npm start`
   * with short merchant-event timings (TEST_EVENT_TIMINGS).
   */
  script?: string;
}

/** A bounded wait, not a speed target: tsx compiles the proxy at each start, which takes seconds on a loaded machine. */
const READY_TIMEOUT_MS = 60_000;

/** Every instance's OBV_MERCHANT_API_KEY: the merchant's server makes its link sessions with it. */
export const INSTANCE_MERCHANT_API_KEY = 'chaos-merchant-api-key-0123456789abcdef';

/** POST /link-sessions on the instance at `url`, as the merchant's server does. */
export function postLinkSession(
  url: string,
  purchase: Record<string, unknown>,
  signal?: AbortSignal,
): Promise<Response> {
  return fetch(`${url}/obv/link-sessions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${INSTANCE_MERCHANT_API_KEY}` },
    body: JSON.stringify(purchase),
    ...(signal ? { signal } : {}),
  });
}

/** One `npm start` process. */
export class ProxyProcess implements ChaosInstance {
  url = '';
  up = false;
  #child: ChildProcess | undefined;
  #starts = 0;
  #port: number | undefined;

  constructor(
    readonly name: string,
    readonly settings: InstanceSettings,
  ) {}

  /** Starts the process and resolves once it answers HTTP. */
  async start(): Promise<void> {
    const port = this.settings.keepPort && this.#port ? this.#port : await freePort();
    this.#port = port;
    this.url = `http://127.0.0.1:${port}`;
    mkdirSync(this.settings.logDir, { recursive: true });
    const log = createWriteStream(join(this.settings.logDir, `${this.name}.${++this.#starts}.log`));
    const child = spawn(process.execPath, ['--import', 'tsx', this.settings.script ?? 'proxy/cli.ts'], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        PORT: String(port),
        OBV_BASE_URL: this.settings.providerUrl,
        OBV_CLIENT_ID: 'sandbox_client',
        OBV_CLIENT_SECRET: 'sandbox_secret',
        OBV_PUBLIC_URL: this.url,
        OBV_WEBHOOK_SECRET: DEFAULT_WEBHOOK_SECRET,
        OBV_MERCHANT_ID: 'merchant-chaos',
        OBV_MERCHANT_API_KEY: INSTANCE_MERCHANT_API_KEY,
        OBV_SANDBOX: 'true',
        ...(this.settings.redisUrl ? { OBV_REDIS_URL: this.settings.redisUrl } : {}),
        OBV_RATE_LIMIT: '0',
        OBV_LOG_LEVEL: 'warn',
        ...this.settings.env,
      },
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    this.#child = child;
    const deadline = Date.now() + READY_TIMEOUT_MS;
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${this.name} exited (${child.exitCode}) while starting`);
      const answered = await fetch(`${this.url}/obv/healthz`).then(
        (r) => r.body?.cancel().then(() => true),
        () => false,
      );
      if (answered) break;
      if (Date.now() > deadline) throw new Error(`${this.name} did not answer within ${READY_TIMEOUT_MS} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    this.up = true;
  }

  /** SIGKILL: no drain, no goodbye; open sockets and requests are cut. */
  async kill(): Promise<void> {
    this.up = false;
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  }
}
