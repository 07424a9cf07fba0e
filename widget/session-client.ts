// The browser side of docs/CONTRACTS.md §2: start a verification over HTTP, then learn its outcome over
// the proxy's WebSocket, with polling of POST /sessions/lookup as the fallback for networks where sockets do
// not work (blocked, or accepted and then dropped by a middlebox). Nothing here renders anything. The
// session id goes in request bodies, never in a URL (logs and proxies record URLs whole).
import type { ObvAccount } from './events.ts';
import { timing } from './settings.ts';
import type { SessionWords } from './strings.ts';

/** What the page tells the proxy when starting: nothing about the shopper or the purchase (see attributes.ts). */
export interface StartRequest {
  /** The merchant server's link session; sent alone (with `consent` when the shopper ticked "save"). */
  linkToken?: string;
  /** The version of the consent words the shopper accepted (saved-accounts.ts). */
  consent?: string;
  /** "Use another account" instead of reconnecting the saved account the link session re-authorizes. */
  another?: true;
  /** Without a link token: the element's language, for the proxy's `enrichStart` hook. */
  language?: string;
}

/** A started verification: where to send the consumer, and how to follow it. */
export interface StartedSession {
  sessionId: string;
  consumerUrl: string;
  /** ISO 8601. */
  expiresAt: string;
  /** The words of the states that follow, in both languages (proxy/words/bank-step.ts). */
  words?: SessionWords;
}

/** A linked account with the proxy's words for its line (CONTRACTS §2): as shown, and as spoken. */
export interface LinkedAccount {
  account: ObvAccount;
  /** The shown line is the bare `accountLabel` when the proxy sent none; the spoken one is then empty. */
  label: [shown: string, spoken: string];
  /** The proxy's words under a returning shopper's account: it will be saved, was reconnected, or is another one. */
  note?: string;
}

/**
 * An outcome with the proxy's shopper-ready words: the linked account, or the failure as the shopper reads
 * it (`text`, empty when the proxy sent none) and that text's language.
 */
export type SessionOutcome = ({ kind: 'success' } & LinkedAccount) | { kind: 'failure'; code: string; message: string; text: string; lang: string };

/** Why a request to the proxy failed: it could not be reached, or it refused what we sent. */
export class ProxyRequestError extends Error {
  constructor(
    readonly kind: 'network' | 'configuration',
    message: string,
    /** The proxy answered, with a failure of its own or the provider's (5xx): not the shopper's network. */
    readonly service = false,
  ) {
    super(message);
  }
}

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

/**
 * The problem+json `detail` (or `title`); `HTTP <status>` if the body says nothing. The proxy's detail
 * already names each wrong field (CONTRACTS §2), so its `errors` are not repeated.
 */
async function problemMessage(response: Response): Promise<string> {
  const body: unknown = await response.json().catch(() => undefined);
  const problem = isObject(body) ? body : {};
  return text(problem.detail || problem.title) || `HTTP ${response.status}`;
}

/** fetch, with "cannot connect" turned into a network {@link ProxyRequestError} (aborts pass through). */
async function request(url: URL, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    throw new ProxyRequestError('network', `Cannot reach ${url.href}`);
  }
}

/** POST {base}/verifications. Rejects with {@link ProxyRequestError}, or an AbortError when aborted. */
export async function startSession(base: URL, body: StartRequest, idempotencyKey: string, signal: AbortSignal): Promise<StartedSession> {
  const response = await postJson(base, 'verifications', body, { signal }, { 'Idempotency-Key': idempotencyKey });
  const { status } = response;
  if (!response.ok) {
    // 4xx means what we sent (or where we sent it) is wrong; 408, 429 and 5xx are worth retrying later.
    const kind = status < 500 && status !== 408 && status !== 429 ? 'configuration' : 'network';
    // The detail (a field, or OBV_ALLOWED_ORIGINS for a 403) is for the developer: the element puts it in
    // obv-error and the console, and shows the shopper only "Bank linking is not available".
    throw new ProxyRequestError(kind, await problemMessage(response), status >= 500);
  }
  const session = readStartedSession(await response.json().catch(() => undefined));
  if (!session) throw new ProxyRequestError('configuration', `No session from ${endpoint(base, 'verifications').href}`);
  return session;
}

/**
 * A started session from outside (the proxy's answer, or what a previous page stored); `undefined` unless it
 * has an id and an http(s) `consumerUrl` (the element links to it: never a javascript: URL).
 */
export function readStartedSession(value: unknown): StartedSession | undefined {
  if (!isObject(value) || !isString(value.sessionId) || !/^https?:/i.test(text(value.consumerUrl))) return undefined;
  return { sessionId: value.sessionId, consumerUrl: text(value.consumerUrl), expiresAt: text(value.expiresAt), words: value.words as SessionWords | undefined };
}

/** Reads an outcome-bearing message or session body; `undefined` if it carries no valid outcome. */
export function parseOutcome(value: unknown): SessionOutcome | undefined {
  if (!isObject(value)) return undefined;
  if (value.status === 'success' && isString(value.linkRef)) {
    const accountLabel = text(value.accountLabel);
    return {
      kind: 'success',
      account: { linkRef: value.linkRef, accountLabel, fiName: text(value.fiName), fiAccountType: text(value.fiAccountType) },
      label: [text(value.displayLabel) || accountLabel, text(value.spokenLabel)],
      note: text(value.note),
    };
  }
  if (value.status === 'failure') {
    return { kind: 'failure', code: text(value.code), message: text(value.message), text: text(value.text), lang: text(value.lang) };
  }
  return undefined;
}

/** How a session ended: with an outcome, or expired. */
export type SessionEnd = SessionOutcome | { kind: 'expired' };

/**
 * What a POST {base}/sessions/lookup says. An unknown session (404) can only be one that ended and was
 * forgotten: to the consumer, it expired.
 */
export type SessionSnapshot = SessionEnd | { kind: 'pending'; returned?: boolean };

/** POST {base}/sessions/{action} with the session's id in the body; `keepalive` outlives the page (Cancel). */
export function postSession(base: URL, action: 'lookup' | 'cancel', sessionId: string, init?: RequestInit): Promise<Response> {
  return postJson(base, `sessions/${action}`, { sessionId }, init);
}

/** POST {base}/{path} with a JSON body and `headers` besides its type (the saved-account routes and the start too); rejects only when the proxy cannot be reached. */
export function postJson(base: URL, path: string, body: object, init?: RequestInit, headers?: Record<string, string>): Promise<Response> {
  return request(endpoint(base, path), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
    cache: 'no-store',
    ...init,
  });
}

/** POST {base}/sessions/lookup. Rejects with {@link ProxyRequestError} when the proxy cannot answer. */
export async function fetchSession(base: URL, sessionId: string, signal?: AbortSignal): Promise<SessionSnapshot> {
  const response = await postSession(base, 'lookup', sessionId, { signal });
  if (response.status === 404) return { kind: 'expired' };
  if (!response.ok) throw new ProxyRequestError('network', await problemMessage(response));
  const data: unknown = await response.json().catch(() => undefined);
  if (!isObject(data)) throw new ProxyRequestError('network', 'Unreadable session');
  if (data.state === 'expired') return { kind: 'expired' };
  // `returned`: back from the bank, the outcome on its way.
  return parseOutcome(data.outcome) ?? { kind: 'pending', returned: data.state === 'returned' };
}

/** How a watch ends: the session's end, or a network error (the proxy could not be asked; the session may still end). */
export type WatchEnd = SessionEnd | { kind: 'network'; message: string };

/** A running watch; `close()` stops every socket, timer and channel it holds. */
export interface SessionWatch {
  close(): void;
}

function backoff(attempt: number): number {
  const ceiling = Math.min(timing.reconnectMaxMs, timing.reconnectBaseMs * 2 ** attempt);
  // Jitter spreads reconnects after a proxy restart instead of having every browser return at once
  // (a fraction of a millisecond is fine for setTimeout).
  return ceiling * (0.5 + Math.random() / 2);
}

/**
 * Follows one session until it settles. The WebSocket comes first; after
 * `timing.socketFailuresBeforePolling` sockets in a row end without an outcome, polling starts and the
 * socket is still tried now and then. Both may deliver the outcome: only the first one counts.
 */
export function watchSession(base: URL, session: Pick<StartedSession, 'sessionId' | 'expiresAt'>, ended: (end: WatchEnd) => void): SessionWatch {
  const { sessionId } = session;
  let done = false;
  let socket: WebSocket | undefined;
  let socketTimer: ReturnType<typeof setTimeout> | undefined;
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  let expiryTimer: ReturnType<typeof setTimeout> | undefined;
  let socketFailures = 0;
  let pollFailures = 0;
  let polling = false;
  const aborter = new AbortController();
  const channel = new BroadcastChannel('obv-link');

  const dropSocket = () => {
    if (socket) {
      socket.onopen = socket.onmessage = socket.onclose = null;
      socket.close();
      socket = undefined;
    }
  };
  const stop = () => {
    done = true;
    clearTimeout(socketTimer);
    clearTimeout(pollTimer);
    clearTimeout(expiryTimer);
    aborter.abort();
    channel.close();
    dropSocket();
  };
  // The one place a watch ends: `done` makes a second delivery (socket and poll racing) a no-op.
  const settle = (snapshot: SessionSnapshot | WatchEnd): boolean => {
    if (!done && snapshot.kind !== 'pending') {
      stop();
      ended(snapshot);
    }
    return done;
  };

  const poll = async () => {
    try {
      const snapshot = await fetchSession(base, sessionId, aborter.signal);
      pollFailures = 0;
      if (!settle(snapshot)) pollTimer = setTimeout(poll, timing.pollIntervalMs);
    } catch (error) {
      if (done) return;
      if (++pollFailures >= timing.pollFailuresBeforeError) {
        settle({ kind: 'network', message: (error as Error).message });
      } else {
        pollTimer = setTimeout(poll, Math.max(timing.pollIntervalMs, backoff(pollFailures)));
      }
    }
  };
  const startPolling = () => {
    if (polling) return;
    polling = true;
    void poll();
  };

  /** A socket ended, or stayed silent, without an outcome. */
  const socketFailed = () => {
    dropSocket();
    if (++socketFailures >= timing.socketFailuresBeforePolling) startPolling();
    socketTimer = setTimeout(connect, polling ? timing.socketRetryWhilePollingMs : backoff(socketFailures - 1));
  };

  const connect = () => {
    const url = endpoint(base, 'ws');
    url.protocol = url.protocol === 'https:' ? 'wss:' : 'ws:';
    try {
      socket = new WebSocket(url);
    } catch {
      socketFailed();
      return;
    }
    // Accepted and then silent (a middlebox that swallows frames) is as useless as refused.
    socketTimer = setTimeout(socketFailed, timing.subscribeTimeoutMs);
    socket.onopen = () => socket?.send(JSON.stringify({ type: 'subscribe', sessionId }));
    socket.onmessage = (event: MessageEvent) => {
      let message: unknown;
      try {
        message = JSON.parse(String(event.data));
      } catch {
        return;
      }
      if (!isObject(message)) return;
      const ours = message.sessionId === sessionId;
      if (message.type === 'subscribed' || message.type === 'state') {
        clearTimeout(socketTimer);
        if (message.state === 'expired') settle({ kind: 'expired' });
      } else if (message.type === 'result' && ours) {
        const outcome = parseOutcome(message.outcome);
        if (outcome) settle(outcome);
      } else if (message.type === 'expired' && ours) {
        settle({ kind: 'expired' });
      } else if (message.type === 'error' && message.code === 'unknown_session') {
        // Unknown: ended and forgotten (see SessionSnapshot).
        settle({ kind: 'expired' });
      }
    };
    socket.onclose = (event: CloseEvent) => {
      clearTimeout(socketTimer);
      socket = undefined;
      // 1000 is the proxy's "the session ended": an outcome this socket did not deliver is in the session.
      // 1001 is "this instance is going away": not a failure, reconnect soon (another instance answers).
      if (event.code === 1000) startPolling();
      else if (event.code === 1001) socketTimer = setTimeout(connect, backoff(0));
      else socketFailed();
    };
  };

  /** Asks the proxy right away (the consumer came back from the bank, or the session should have expired). */
  const checkNow = () => {
    if (!done) fetchSession(base, sessionId, aborter.signal).then(settle, () => undefined);
  };

  // Back on the page after a while (the bank tab, a locked phone), the flow asks (link-flow.ts, wake).
  // The return page names no session (an id there would be readable by every same-origin page): each
  // waiting element asks the proxy about its own.
  channel.onmessage = (event: MessageEvent) => {
    if (isObject(event.data) && event.data.type === 'obv-returned') checkNow();
  };
  // The proxy says `expired` itself; this check covers a socket that went quiet without closing.
  const untilExpiry = Date.parse(session.expiresAt) - Date.now();
  // (Sessions live minutes, far below setTimeout's 24-day ceiling.)
  if (Number.isFinite(untilExpiry)) expiryTimer = setTimeout(checkNow, Math.max(untilExpiry, 0) + timing.expiryCheckDelayMs);

  connect();
  return { close: stop };
}
