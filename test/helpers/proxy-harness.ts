// Starts the proxy (and, with startProxyPair, the sandbox provider) on loopback port 0, wired the way a
// merchant wires them: an Express app with the router at /obv and the relay on the same server.
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import express from 'express';
import { startProvider, type RunningProvider, type StartProviderOptions } from '../../sandbox/index.ts';
import {
  createObvProxy,
  createStorage,
  type ObvProxy,
  type ObvProxyOptions,
  type ProxyConfigInput,
  type Storage,
} from '../../proxy/index.ts';
import type { VerificationDraft } from '../../proxy/index.ts';
import type { ResultBus } from '../../proxy/storage/result-bus.ts';
import type { SessionRecord, SessionStore } from '../../proxy/storage/sessions.ts';
import { openOutcome } from '../../proxy/sealing/sealed-outcome.ts';
import { createSealer } from '../../proxy/sealing/sealer.ts';
import { captureLogs, type LogCapture } from './log-capture.ts';
import { SANDBOX_WEBHOOK_SECRET } from './webhooks.ts';

/** The sandbox's documented working client (CONTRACTS §1). */
export const SANDBOX_CLIENT = { clientId: 'sandbox_client', clientSecret: 'sandbox_secret' } as const;

/**
 * The accountToken a stored record holds, opened with the proxy's own keys; asserts first that the record
 * holds it sealed, never in the clear.
 */
export function storedAccountToken(proxy: ObvProxy, record: SessionRecord | undefined): string | undefined {
  if (!record) return undefined;
  const opened = openOutcome(createSealer(proxy.config.sealingKeys ?? []), record);
  if (opened?.status !== 'success') return undefined;
  if (JSON.stringify(record).includes(opened.accountToken))
    throw new Error('the stored record holds the accountToken in the clear');
  return opened.accountToken;
}

/** A merchant API key for POST /transactions in tests. */
export const TEST_MERCHANT_API_KEY = 'test-merchant-api-key-0123456789abcdef';

/** A complete sandbox-mode configuration for a proxy at `publicUrl` talking to the provider at `providerUrl`. */
export function sandboxProxyConfig(providerUrl: string, publicUrl: string): ProxyConfigInput {
  return {
    baseUrl: providerUrl,
    gatewayUrl: providerUrl,
    ...SANDBOX_CLIENT,
    publicUrl,
    webhookSecret: SANDBOX_WEBHOOK_SECRET,
    merchantId: 'merchant-test',
    merchantSubId: 'sub-1',
    pgwAppId: 'sandbox-app',
    pgwClientId: 'sandbox_client',
    merchantApiKey: TEST_MERCHANT_API_KEY,
    sandbox: true,
    rateLimit: 0,
    upstreamTimeoutMs: 5_000,
    logLevel: 'debug',
    // Each test its own state: the durable default is tested where durability is the point (test/e2e/crash-safety).
    storage: 'memory',
    // Tests that switch sandbox mode off say so explicitly, as an operator would have to.
    allowVolatileStorage: true,
  };
}

export interface RunningProxy {
  proxy: ObvProxy;
  server: http.Server;
  /** `http://127.0.0.1:PORT` — also the proxy's public URL and an allowed origin (same origin). */
  origin: string;
  /** `{origin}/obv`: prefix of every proxy route. */
  baseUrl: string;
  /** `ws://127.0.0.1:PORT/obv/ws`. */
  wsUrl: string;
  /** Every log line the proxy wrote. */
  logs: LogCapture;
  /** Every response the proxy's server sent (to browsers and to the provider), body as text. */
  responses: RecordedResponse[];
  /** Where the proxy keeps its state: a memory storage of its own unless `proxy.backend` was given. */
  backend: Storage;
  /** The storage's session store and result bus. */
  store: SessionStore;
  bus: ResultBus;
  /** The per-session notification URL the proxy gave the provider for `sessionId`. */
  notificationUrl(sessionId: string): Promise<string>;
  /** The per-session return URL (its own reference, never the session id) the proxy gave the provider. */
  returnUrl(sessionId: string): Promise<string>;
  /** Makes a link session, as the merchant's server does, for PURCHASE with `changes`; returns its link token. */
  createLinkSession(changes?: Partial<LinkSessionInput>): Promise<string>;
  /**
   * Starts a verification as a same-origin page with the link token of a new link session for PURCHASE
   * with `changes`; throws unless 201.
   */
  startVerification(
    changes?: Partial<LinkSessionInput>,
    headers?: Record<string, string>,
  ): Promise<StartedVerification>;
  /** POSTs `body` to /verifications as a same-origin page (a link token, or a language for enrichStart); throws unless 201. */
  startWith(body: Record<string, unknown>, headers?: Record<string, string>): Promise<StartedVerification>;
  close(): Promise<void>;
}

/** What POST /link-sessions takes (proxy.createLinkSession in Node). */
export type LinkSessionInput = Parameters<ObvProxy['createLinkSession']>[0];

/** A started verification, as the page gets it. */
export interface StartedVerification {
  sessionId: string;
  consumerUrl: string;
  expiresAt: string;
}

export interface RecordedResponse {
  method: string;
  path: string;
  status: number;
  /** The Content-Type header, if any. */
  contentType: string;
  /** The Cache-Control header, if any. */
  cacheControl: string;
  body: string;
}

/** Where a secret showed up: `log` lines or the body of a `response`. */
export interface SecretLeak {
  secret: string;
  where: string;
}

/**
 * Every occurrence of `secrets` in the log lines, and of `responseSecrets` (default: the same list) in the
 * response bodies. Values shorter than 8 characters are skipped: they would match by accident.
 */
export function findSecretLeaks(
  source: { logs: LogCapture; responses: RecordedResponse[] },
  secrets: readonly string[],
  responseSecrets: readonly string[] = secrets,
): SecretLeak[] {
  const leaks: SecretLeak[] = [];
  const long = (values: readonly string[]) => values.filter((value) => value.length >= 8);
  for (const secret of long(secrets)) {
    for (const line of source.logs.lines)
      if (line.includes(secret)) leaks.push({ secret, where: `log: ${line.slice(0, 200)}` });
  }
  for (const secret of long(responseSecrets)) {
    for (const response of source.responses) {
      if (response.body.includes(secret))
        leaks.push({ secret, where: `response to ${response.method} ${response.path}` });
    }
  }
  return leaks;
}

/** The credentials a proxy holds, in the forms they could leak in (raw, Basic-encoded, the webhook key decoded). */
export function configSecrets(config: ObvProxy['config']): string[] {
  const webhookKey = config.webhookSecret.slice('whsec_'.length);
  return [
    config.clientSecret,
    Buffer.from(`${encodeURIComponent(config.clientId)}:${encodeURIComponent(config.clientSecret)}`).toString('base64'),
    config.webhookSecret,
    webhookKey,
    Buffer.from(webhookKey, 'base64').toString('utf8'),
    ...(config.merchantApiKey ? [config.merchantApiKey] : []),
    ...(config.merchantApiKeys ?? []).map((entry) => entry.key),
  ];
}

function throwOnLeaks(leaks: SecretLeak[]): void {
  if (leaks.length === 0) return;
  const lines = leaks.slice(0, 10).map((leak) => `  ${leak.secret.slice(0, 6)}… in ${leak.where}`);
  throw new Error(`secret leak scan failed (${leaks.length}):\n${lines.join('\n')}`);
}

/** Records each response body the app writes (for the secret-leak scan). */
function recordResponses(app: express.Express, into: RecordedResponse[]): void {
  app.use((req, res, next) => {
    const chunks: Buffer[] = [];
    const write = res.write.bind(res) as (...args: unknown[]) => boolean;
    const end = res.end.bind(res) as (...args: unknown[]) => express.Response;
    const keep = (chunk: unknown) => {
      if (typeof chunk === 'string') chunks.push(Buffer.from(chunk));
      else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    };
    res.write = ((...args: unknown[]) => {
      keep(args[0]);
      return write(...args);
    }) as typeof res.write;
    res.end = ((...args: unknown[]) => {
      if (typeof args[0] !== 'function') keep(args[0]);
      const contentType = String(res.getHeader('content-type') ?? '');
      const cacheControl = String(res.getHeader('cache-control') ?? '');
      into.push({
        method: req.method,
        path: req.originalUrl,
        status: res.statusCode,
        contentType,
        cacheControl,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      return end(...args);
    }) as typeof res.end;
    next();
  });
}

export interface StartProxyOptions {
  /** Provider base URL ({base_url} and {gateway_url}). */
  providerUrl: string;
  /** Overrides of the sandbox configuration and dependencies (backend, relay, …). */
  proxy?: Partial<ObvProxyOptions>;
}

/** The purchase a test merchant's server names (a link session's values). */
export const PURCHASE = {
  merchantUserId: 'user-42',
  merchantTransactionId: 'order-1001',
  amount: '49.99',
  currency: 'USD',
  language: 'en-US',
  consumer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
} as const;

/**
 * An enrichStart hook's work in a test: the merchant's own session names PURCHASE's user, consumer and
 * amount (the draft's order id and currency are the proxy's defaults).
 */
export function draftWithPurchase(
  draft: VerificationDraft,
  merchantUserId: string = PURCHASE.merchantUserId,
): VerificationDraft {
  return {
    ...draft,
    consumer: { ...PURCHASE.consumer },
    merchant: { ...draft.merchant, merchantUserId },
    transaction: { ...draft.transaction, amount: PURCHASE.amount },
  };
}

/** Starts one proxy instance on 127.0.0.1:0 against `providerUrl`. */
export async function startProxy(options: StartProxyOptions): Promise<RunningProxy> {
  const app = express();
  const responses: RecordedResponse[] = [];
  recordResponses(app, responses);
  const server = http.createServer(app);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const logs = captureLogs('debug');
  // Each test its own state, in memory (the durable default is tested where durability is the point).
  const backend = options.proxy?.backend ?? createStorage({ kind: 'memory' });
  const store = backend.sessionStore;
  const bus = backend.resultBus;
  const proxy = createObvProxy({
    ...sandboxProxyConfig(options.providerUrl, origin),
    logger: logs.logger,
    ...options.proxy,
    backend,
  } as ObvProxyOptions);
  app.use(proxy.mountPath, proxy.router);
  proxy.attachRelay(server);
  const baseUrl = `${origin}${proxy.mountPath}`;
  /** Every link token made here: like any the proxy answered, never in a log line. */
  const linkTokens: string[] = [];
  async function createLinkSession(changes: Partial<LinkSessionInput> = {}): Promise<string> {
    const { linkToken } = await proxy.createLinkSession({ ...PURCHASE, ...changes });
    linkTokens.push(linkToken);
    return linkToken;
  }
  async function startWith(
    body: Record<string, unknown>,
    headers: Record<string, string> = {},
  ): Promise<StartedVerification> {
    const response = await fetch(`${baseUrl}/verifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin, ...headers },
      body: JSON.stringify(body),
    });
    const json = (await response.json()) as StartedVerification;
    if (response.status !== 201) throw new Error(`start failed: ${response.status} ${JSON.stringify(json)}`);
    return json;
  }
  return {
    proxy,
    server,
    origin,
    baseUrl,
    wsUrl: `${baseUrl.replace(/^http/, 'ws')}/ws`,
    logs,
    responses,
    backend,
    store,
    bus,
    async notificationUrl(sessionId) {
      const record = await store.get(sessionId);
      if (!record) throw new Error(`no session ${sessionId}`);
      return `${baseUrl}/notifications/${record.notificationRef}`;
    },
    async returnUrl(sessionId) {
      const record = await store.get(sessionId);
      if (!record?.returnRef) throw new Error(`no session ${sessionId}`);
      return `${baseUrl}/return/${record.returnRef}`;
    },
    createLinkSession,
    startWith,
    async startVerification(changes = {}, headers = {}) {
      return startWith({ linkToken: await createLinkSession(changes) }, headers);
    },
    async close() {
      await proxy.close();
      // An injected storage is the caller's to close; the one made here is ours.
      if (!options.proxy?.backend) await backend.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
      // Every test that uses this harness is also a secret-leak scan of what its proxy logged and answered:
      // credentials nowhere, and no accountToken, session id (it reads an outcome) or link reference the
      // proxy ever answered with in a log line.
      const answered = (field: string) =>
        responses.flatMap((response) =>
          [...response.body.matchAll(new RegExp(`"${field}":"([^"]+)"`, 'g'))].map((match) => match[1]!),
        );
      throwOnLeaks([
        ...findSecretLeaks({ logs, responses }, configSecrets(proxy.config)),
        ...findSecretLeaks({ logs, responses: [] }, [
          ...answered('accountToken'),
          ...answered('sessionId'),
          ...answered('linkRef'),
          ...answered('linkToken'),
          ...linkTokens,
        ]),
      ]);
    },
  };
}

export interface ProxyPair extends RunningProxy {
  provider: RunningProvider;
}

/**
 * Starts the sandbox provider and one proxy against it. The provider retries notifications quickly
 * (50 ms, 100 ms, 200 ms) unless `provider` says otherwise. `close()` closes both.
 */
export async function startProxyPair(
  options: { provider?: StartProviderOptions; proxy?: Partial<ObvProxyOptions> } = {},
): Promise<ProxyPair> {
  const provider = await startProvider({ port: 0, notificationRetryDelaysMs: [50, 100, 200], ...options.provider });
  let running: RunningProxy;
  try {
    running = await startProxy({ providerUrl: provider.url, proxy: options.proxy });
  } catch (error) {
    await provider.close();
    throw error;
  }
  return {
    ...running,
    provider,
    async close() {
      // Bearer tokens and accountTokens must appear in no log and no response — the one exception is the
      // merchant server's own API-key route that reads a verified account (GET /links/:linkRef).
      const bearers = [...provider.state.tokens.keys()];
      const accountTokens = [...provider.state.accounts.keys()];
      const browserVisible = {
        logs: running.logs,
        responses: running.responses.filter(
          (response) => !/^GET \S*\/links\//.test(`${response.method} ${response.path}`),
        ),
      };
      const leaks = findSecretLeaks(browserVisible, [...bearers, ...accountTokens]);
      try {
        await running.close();
      } finally {
        await provider.close();
      }
      throwOnLeaks(leaks);
    },
  };
}

/**
 * A memory storage with some of its parts replaced (test doubles that fail, count or lose messages): what
 * a test hands createObvProxy as `backend`. Its close() closes the memory parts; the doubles are the test's.
 */
export function storageWith(parts: Partial<Storage>): Storage {
  const memory = createStorage({ kind: 'memory' });
  return { ...memory, ...parts, close: () => memory.close() };
}

/**
 * startProxyPair on a memory storage whose session store and result bus are the given ones (test doubles
 * that fail or count); the pair and the store are closed after test `t`.
 */
export async function startProxyPairWithBackend(
  t: TestContext,
  parts: { sessionStore: SessionStore; resultBus: ResultBus },
  proxy: Partial<ObvProxyOptions> = {},
): Promise<ProxyPair> {
  const backend = storageWith(parts);
  const pair = await startProxyPair({ proxy: { ...proxy, backend } });
  t.after(async () => {
    await pair.close();
    await backend.close();
    await parts.sessionStore.close();
  });
  return pair;
}
