// The browser side of docs/CONTRACTS.md §2: start a verification over HTTP, then learn its outcome over
// the proxy's WebSocket — reconnecting with backoff, and polling GET /sessions/:id when sockets cannot
// connect at all (corporate proxies and some CSPs block them). Nothing here touches the DOM.
import type { ObvAccount } from './events.ts';

/** What the page may tell the proxy when starting (all optional; the proxy adds its trusted data). */
export interface StartRequest {
  merchantUserId?: string;
  merchantTransactionId?: string;
  amount?: string;
  currency?: string;
  language?: string;
  accountToken?: string;
}

/** A started verification: where to send the consumer, and how to follow it. */
export interface StartedSession {
  sessionId: string;
  consumerUrl: string;
  /** ISO 8601. */
  expiresAt: string;
}

export type SessionOutcome = ({ status: 'success' } & ObvAccount) | { status: 'failure'; code: string; message: string };

/** Why a request to the proxy failed: it could not be reached, or it refused what we sent. */
export class ProxyRequestError extends Error {
  constructor(
    readonly kind: 'network' | 'configuration',
    message: string,
  ) {
    super(message);
  }
}

/** Delays and limits; tests shorten them. */
export const timing = {
  reconnectBaseMs: 500,
  reconnectMaxMs: 15_000,
  /** Sockets that fail before ever opening, in a row, before switching to polling. */
  socketFailuresBeforePolling: 2,
  pollIntervalMs: 2_500,
  /** Polls that fail in a row before the element reports a network error. */
  pollFailuresBeforeError: 6,
};

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const isString = (value: unknown): value is string => typeof value === 'string' && value !== '';
const text = (value: unknown): string => (value == null ? '' : String(value));

/** Joins a path onto the proxy base, keeping the base's own path ("/obv" + "ws" → "/obv/ws"). */
export function endpoint(base: URL, path: string): URL {
  const url = new URL(base.href);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`;
  return url;
}

function webSocketUrl(base: URL): string {
  const url = endpoint(base, 'ws');
  url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
  return url.href;
}

async function problemMessage(response: Response): Promise<string> {
  const fallback = `HTTP ${response.status}`;
  try {
    const body: unknown = await response.json();
    if (!isObject(body)) return fallback;
    const fields = Array.isArray(body.errors) ? body.errors.map((e: Json) => `${e.path}: ${e.message}`) : [];
    const text = isString(body.detail) ? body.detail : isString(body.title) ? body.title : fallback;
    return fields.length ? `${text} (${fields.join('; ')})` : text;
  } catch {
    return fallback;
  }
}

async function request(url: URL, init: RequestInit): Promise<Response> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, headers: { Accept: 'application/json', ...init.headers } });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ProxyRequestError('network', `Cannot reach ${url.href}`);
  }
  return response;
}

/** POST {base}/verifications. Rejects with {@link ProxyRequestError}, or an AbortError when aborted. */
export async function startSession(
  base: URL,
  body: StartRequest,
  options: { idempotencyKey: string; signal?: AbortSignal },
): Promise<StartedSession> {
  const url = endpoint(base, 'verifications');
  const init: RequestInit = {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'Idempotency-Key': options.idempotencyKey },
    body: JSON.stringify(body),
  };
  if (options.signal) init.signal = options.signal;
  const response = await request(url, init);
  if (!response.ok) {
    // 4xx means what we sent (or where we sent it) is wrong; 429 and 5xx are worth retrying later.
    const kind = response.status >= 400 && response.status < 500 && response.status !== 429 && response.status !== 408 ? 'configuration' : 'network';
    throw new ProxyRequestError(kind, await problemMessage(response));
  }
  const data: unknown = await response.json().catch(() => undefined);
  if (!isObject(data) || !isString(data.sessionId) || !isString(data.consumerUrl) || !/^https?:/i.test(data.consumerUrl)) {
    throw new ProxyRequestError('configuration', `No session from ${url.href}`);
  }
  return { sessionId: data.sessionId, consumerUrl: data.consumerUrl, expiresAt: isString(data.expiresAt) ? data.expiresAt : '' };
}

/** Reads an outcome-bearing message or session body; `undefined` if it carries no valid outcome. */
export function parseOutcome(value: unknown): SessionOutcome | undefined {
  if (!isObject(value)) return undefined;
  if (value.status === 'success' && isString(value.accountToken)) {
    return {
      status: 'success',
      accountToken: value.accountToken,
      accountLabel: text(value.accountLabel),
      fiName: text(value.fiName),
      fiAccountType: text(value.fiAccountType),
    };
  }
  if (value.status === 'failure') {
    return { status: 'failure', code: text(value.code), message: text(value.message) };
  }
  return undefined;
}

/** What a GET {base}/sessions/:id says; `gone` for an unknown session (404). */
export type SessionSnapshot = { kind: 'outcome'; outcome: SessionOutcome } | { kind: 'expired' } | { kind: 'pending' } | { kind: 'gone' };

/** GET {base}/sessions/:id. Rejects with {@link ProxyRequestError} when the proxy cannot answer. */
export async function fetchSession(base: URL, sessionId: string, signal?: AbortSignal): Promise<SessionSnapshot> {
  const init: RequestInit = { method: 'GET', cache: 'no-store' };
  if (signal) init.signal = signal;
  const response = await request(endpoint(base, `sessions/${encodeURIComponent(sessionId)}`), init);
  if (response.status === 404) return { kind: 'gone' };
  if (!response.ok) throw new ProxyRequestError('network', await problemMessage(response));
  const data: unknown = await response.json().catch(() => undefined);
  if (!isObject(data)) throw new ProxyRequestError('network', 'Unreadable session');
  const outcome = parseOutcome(data.outcome);
  if (outcome) return { kind: 'outcome', outcome };
  return data.state === 'expired' ? { kind: 'expired' } : { kind: 'pending' };
}

/** Callbacks of {@link watchSession}; exactly one of `outcome`, `expired` or `networkError` is called. */
export interface WatchHandlers {
  outcome(outcome: SessionOutcome): void;
  expired(): void;
  networkError(message: string): void;
}

/** A running watch; `close()` stops every socket, timer and channel it holds. */
export interface SessionWatch {
  close(): void;
  /** Asks the proxy right away (the consumer came back from the bank, or the session should have expired). */
  checkNow(): void;
}

function backoff(attempt: number): number {
  const ceiling = Math.min(timing.reconnectMaxMs, timing.reconnectBaseMs * 2 ** attempt);
  // Jitter spreads reconnects after a proxy restart instead of having every browser return at once.
  return Math.round(ceiling * (0.5 + Math.random() / 2));
}

/** Follows one session until it settles: WebSocket first, polling as the fallback. */
export function watchSession(base: URL, session: Pick<StartedSession, 'sessionId' | 'expiresAt'>, handlers: WatchHandlers): SessionWatch {
  const { sessionId } = session;
  let done = false;
  let socket: WebSocket | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let socketFailures = 0;
  let reconnects = 0;
  let pollFailures = 0;
  let polling = false;
  let expiryTimer: ReturnType<typeof setTimeout> | undefined;
  const aborter = new AbortController();
  const channel = new BroadcastChannel('obv-link');

  const stop = () => {
    done = true;
    clearTimeout(timer);
    clearTimeout(expiryTimer);
    aborter.abort();
    channel.close();
    if (socket) {
      socket.onopen = socket.onmessage = socket.onclose = socket.onerror = null;
      socket.close();
      socket = undefined;
    }
  };
  const settle = (snapshot: SessionSnapshot): boolean => {
    if (done) return true;
    if (snapshot.kind === 'outcome') {
      stop();
      handlers.outcome(snapshot.outcome);
    } else if (snapshot.kind === 'expired' || snapshot.kind === 'gone') {
      // An unknown session can only be one that ended and was forgotten: to the consumer, it expired.
      stop();
      handlers.expired();
    }
    return done;
  };
  const later = (fn: () => void, ms: number) => {
    clearTimeout(timer);
    timer = setTimeout(fn, ms);
  };

  const poll = async () => {
    if (done) return;
    try {
      const snapshot = await fetchSession(base, sessionId, aborter.signal);
      pollFailures = 0;
      if (!settle(snapshot)) later(poll, timing.pollIntervalMs);
    } catch (error) {
      if (done) return;
      pollFailures += 1;
      if (pollFailures >= timing.pollFailuresBeforeError) {
        stop();
        handlers.networkError((error as Error).message);
      } else {
        later(poll, Math.max(timing.pollIntervalMs, backoff(pollFailures)));
      }
    }
  };

  const connect = () => {
    if (done) return;
    let opened = false;
    try {
      socket = new WebSocket(webSocketUrl(base));
    } catch {
      socket = undefined;
      onSocketLost(false);
      return;
    }
    socket.onopen = () => {
      opened = true;
      socketFailures = 0;
      socket?.send(JSON.stringify({ type: 'subscribe', sessionId }));
    };
    socket.onmessage = (event: MessageEvent) => {
      let message: unknown;
      try {
        message = JSON.parse(String(event.data));
      } catch {
        return;
      }
      if (!isObject(message)) return;
      if (message.type === 'subscribed' || message.type === 'state') {
        reconnects = 0;
        if (message.state === 'expired') settle({ kind: 'expired' });
      } else if (message.type === 'result' && message.sessionId === sessionId) {
        const outcome = parseOutcome(message.outcome);
        if (outcome) settle({ kind: 'outcome', outcome });
      } else if (message.type === 'expired' && message.sessionId === sessionId) {
        settle({ kind: 'expired' });
      } else if (message.type === 'error' && message.code === 'unknown_session') {
        settle({ kind: 'gone' });
      }
    };
    socket.onclose = () => {
      socket = undefined;
      onSocketLost(opened);
    };
  };

  const onSocketLost = (wasOpen: boolean) => {
    if (done || polling) return;
    if (!wasOpen) socketFailures += 1;
    if (socketFailures >= timing.socketFailuresBeforePolling) {
      polling = true;
      void poll();
      return;
    }
    later(connect, backoff(reconnects++));
  };

  const checkNow = () => {
    if (done) return;
    fetchSession(base, sessionId, aborter.signal).then(settle, () => undefined);
  };

  channel.onmessage = (event: MessageEvent) => {
    if (isObject(event.data) && event.data.type === 'obv-returned' && event.data.sessionId === sessionId) checkNow();
  };
  // The proxy says `expired` itself; this check covers a socket that went quiet without closing.
  const untilExpiry = Date.parse(session.expiresAt) - Date.now();
  // (Sessions live minutes, far below setTimeout's 24-day ceiling.)
  if (Number.isFinite(untilExpiry)) expiryTimer = setTimeout(checkNow, Math.max(untilExpiry, 0) + 1_000);

  connect();
  return { close: stop, checkNow };
}
