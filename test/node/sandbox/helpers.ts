// Shared fixtures of the provider tests: a provider on port 0 with short retry delays, a webhook
// receiver that records what it gets, and small clients for each endpoint.
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import type { RunningProvider, StartProviderOptions } from '../../../sandbox/index.ts';
import { startProvider } from '../../../sandbox/index.ts';

export const TOKEN_PATH = '/exp/auth/mint/v1/oauth2/token';
export const VERIFICATION_PATH = '/exp/ext/mint/ooes/v1/obv';
export const TRANSACTION_PATH = '/transaction/v4/interactive';
export const SANDBOX_WEBHOOK_SECRET = 'whsec_c2FuZGJveC13ZWJob29rLXNlY3JldC1vYnYtbGluaw==';

/** Starts a provider closed after the test; notifications go to `defaultNotificationURL` unless set. */
export async function startTestProvider(t: TestContext, options: StartProviderOptions = {}): Promise<RunningProvider> {
  const provider = await startProvider({
    notificationRetryDelaysMs: [10, 20, 40],
    notificationTimeoutMs: 300,
    defaultReturnURL: 'http://127.0.0.1:9/merchant/return',
    defaultNotificationURL: 'http://127.0.0.1:9/merchant/notifications',
    ...options,
  });
  t.after(() => provider.close());
  return provider;
}

export function basicAuth(clientId: string, clientSecret: string): string {
  return `Basic ${Buffer.from(`${clientId}:${clientSecret}`).toString('base64')}`;
}

export interface TokenRequest {
  authorization?: string | null;
  query?: string;
  body?: string;
  contentType?: string | null;
  signal?: AbortSignal;
}

/** POSTs to the token endpoint; defaults are a valid request for `sandbox_client`. */
export function requestToken(baseUrl: string, request: TokenRequest = {}): Promise<Response> {
  const headers: Record<string, string> = {};
  const authorization =
    request.authorization === undefined ? basicAuth('sandbox_client', 'sandbox_secret') : request.authorization;
  if (authorization !== null) headers.authorization = authorization;
  const contentType = request.contentType === undefined ? 'application/x-www-form-urlencoded' : request.contentType;
  if (contentType !== null) headers['content-type'] = contentType;
  const query = request.query ?? 'grant_type=client_credentials&scope=obv/token-request';
  return fetch(`${baseUrl}${TOKEN_PATH}?${query}`, {
    method: 'POST',
    headers,
    body: request.body ?? '',
    signal: request.signal,
  });
}

/** A fresh bearer token for `sandbox_client`. */
export async function accessToken(provider: RunningProvider): Promise<string> {
  const response = await requestToken(provider.url);
  if (response.status !== 200) throw new Error(`token request failed: ${response.status}`);
  const body = (await response.json()) as { access_token: string };
  return body.access_token;
}

/** A valid verification request body (docs/CONTRACTS.md §1); `merchant` fields may be overridden. */
export function verificationBody(
  merchant: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    countryCode: 'US',
    consumer: { firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com' },
    merchant: { merchantId: 'merchant-1', merchantUserId: 'user-42', merchantTransactionId: 'order-1001', ...merchant },
    transaction: { amount: '49.99', currency: 'USD', product: 'OBV', language: 'en-US' },
    ...extra,
  };
}

/** POSTs JSON with a bearer token. */
export function postJson(
  url: string,
  token: string | null,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(token === null ? {} : { authorization: `Bearer ${token}` }),
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Starts a verification and returns endpoint 2's answer. */
export async function startVerification(
  provider: RunningProvider,
  body: Record<string, unknown> = verificationBody(),
  token?: string,
): Promise<{ consumerUrl: string; verificationId: string }> {
  const response = await postJson(`${provider.url}${VERIFICATION_PATH}`, token ?? (await accessToken(provider)), body);
  if (response.status !== 200) throw new Error(`verification failed: ${response.status} ${await response.text()}`);
  return (await response.json()) as { consumerUrl: string; verificationId: string };
}

/** Submits the bank page's form the way the browser does (urlencoded, no redirect following). */
export function submitConsumerForm(
  consumerUrl: string,
  fields: { username?: string; password?: string; action?: 'signin' | 'cancel'; t?: string },
): Promise<Response> {
  const url = new URL(consumerUrl);
  const form = new URLSearchParams({
    t: fields.t ?? url.searchParams.get('t') ?? '',
    username: fields.username ?? '',
    password: fields.password ?? '',
    action: fields.action ?? 'signin',
  });
  return fetch(`${url.origin}${url.pathname}`, { method: 'POST', redirect: 'manual', body: form });
}

export interface ReceivedNotification {
  headers: IncomingHttpHeaders;
  body: string;
}

/** What the receiver answers to the n-th request (0-based): a status, 'hang' to never answer, 'reset' to drop the connection. */
export type ReceiverBehaviour = (index: number) => number | 'hang' | 'reset';

export interface WebhookReceiver {
  url: string;
  received: ReceivedNotification[];
  /** Resolves once `count` requests arrived. */
  waitFor(count: number): Promise<void>;
}

/** A merchant notification endpoint on port 0 that records every request; closed after the test. */
export async function startWebhookReceiver(
  t: TestContext,
  behaviour: ReceiverBehaviour = () => 204,
): Promise<WebhookReceiver> {
  const received: ReceivedNotification[] = [];
  const waiters: Array<{ count: number; resolve: () => void }> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const index = received.length;
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      for (const waiter of waiters.filter((w) => received.length >= w.count)) waiter.resolve();
      const answer = behaviour(index);
      if (answer === 'reset') req.socket.destroy();
      else if (answer !== 'hang') res.writeHead(answer).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notifications`,
    received,
    waitFor: (count) =>
      received.length >= count ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
  };
}

/** Reads a problem+json response, checking its media type. */
export async function readProblem(
  response: Response,
): Promise<{ status: number; title: string; detail: string; errors?: Array<{ path: string; message: string }> }> {
  const type = response.headers.get('content-type') ?? '';
  if (!type.startsWith('application/problem+json'))
    throw new Error(`expected problem+json, got ${type}: ${await response.text()}`);
  return (await response.json()) as {
    status: number;
    title: string;
    detail: string;
    errors?: Array<{ path: string; message: string }>;
  };
}
