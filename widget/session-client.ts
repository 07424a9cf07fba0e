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
export type SessionOutcome =
  | ({ kind: 'success' } & LinkedAccount)
  | { kind: 'failure'; code: string; message: string; text: string; lang: string };

/** Why a request to the proxy failed: it could not be reached, or it refused what we sent. */
export class ProxyRequestError extends Error {
  constructor(
    readonly kind: 'network' | 'configuration',
    message: string,
    /** The proxy's answer, when it answered (a 5xx is a failure of its own or the provider's: not the shopper's network). */
    readonly status = 0,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json => typeof value === 'object' && value !== null;
const text = (value: unknown): string => (value == null ? '' : String(value));

/** Joins a path onto the proxy base, keeping the base's own path ("/obv" + "ws" → "/obv/ws"). */
export function endpoint(base: URL, path: string): URL {
  const url = new URL(base);
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/${path}`;
  return url;
}

/**
 * POST {base}/{path} with a JSON body and `headers` besides its type (the start, a session's lookup or
 * cancel, the saved-account routes); the answer's JSON (`undefined` when it has none), or a
 * {@link ProxyRequestError}: `network` when the proxy cannot be reached or answers 408, 429 or 5xx (worth
 * trying again later), `configuration` for any other 4xx (what we sent, or where we sent it, is wrong). Its
 * message is the problem+json `detail` (or `title`), which already names each wrong field (CONTRACTS §2),
 * else `HTTP <status>`. An abort or a time-out passes through.
 */
export async function post(
  base: URL,
  path: string,
  body: object,
  init?: RequestInit,
  headers?: Record<string, string>,
): Promise<unknown> {
  const url = endpoint(base, path);
  let response: Response;
  // No cache mode: a POST is never answered from the HTTP cache.
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
      ...init,
    });
  } catch (error) {
    if (init?.signal?.aborted) throw error;
    throw new ProxyRequestError('network', `Cannot reach ${url.href}`);
  }
  const { status } = response;
  const answer: unknown = await response.json().catch(() => undefined);
  if (response.ok) return answer;
  const problem = isObject(answer) ? answer : {};
  throw new ProxyRequestError(
    status < 500 && status !== 408 && status !== 429 ? 'configuration' : 'network',
    text(problem.detail || problem.title) || `HTTP ${status}`,
    status,
  );
}

/** POST {base}/verifications. Rejects with {@link ProxyRequestError}, or the signal's reason. */
export async function startSession(
  base: URL,
  body: StartRequest,
  idempotencyKey: string,
  signal: AbortSignal,
): Promise<StartedSession> {
  // The detail (a field, or OBV_ALLOWED_ORIGINS for a 403) is for the developer: the element puts it in
  // obv-error and the console, and shows the shopper only "Bank linking is not available".
  const session = readStartedSession(
    await post(base, 'verifications', body, { signal }, { 'Idempotency-Key': idempotencyKey }),
  );
  if (!session) throw new ProxyRequestError('configuration', 'No session');
  return session;
}

/**
 * A started session from outside (the proxy's answer, or what a previous page stored); `undefined` unless it
 * has an id and an http(s) `consumerUrl` (the element links to it: never a javascript: URL).
 */
export function readStartedSession(value: unknown): StartedSession | undefined {
  // Taken as it comes (the proxy's answer, or this page's own earlier copy of it) once these two hold.
  return isObject(value) && typeof value.sessionId === 'string' && /^https?:/i.test(text(value.consumerUrl))
    ? (value as unknown as StartedSession)
    : undefined;
}

/** Reads an outcome-bearing message or session body; `undefined` if it carries no valid outcome. */
export function parseOutcome(value: unknown): SessionOutcome | undefined {
  if (!isObject(value)) return undefined;
  if (value.status === 'success' && value.linkRef) {
    const accountLabel = text(value.accountLabel);
    return {
      kind: 'success',
      account: {
        linkRef: text(value.linkRef),
        accountLabel,
        fiName: text(value.fiName),
        fiAccountType: text(value.fiAccountType),
      },
      label: [text(value.displayLabel) || accountLabel, text(value.spokenLabel)],
      note: text(value.note),
    };
  }
  if (value.status === 'failure') {
    return {
      kind: 'failure',
      code: text(value.code),
      message: text(value.message),
      text: text(value.text),
      lang: text(value.lang),
    };
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
export function postSession(
  base: URL,
  action: 'lookup' | 'cancel',
  sessionId: string,
  init?: RequestInit,
): Promise<unknown> {
  return post(base, `sessions/${action}`, { sessionId }, init);
}

/** What a session's body (POST /sessions/lookup or /sessions/cancel) says of it. */
export function readSession(data: unknown): SessionSnapshot {
  if (!isObject(data)) throw new ProxyRequestError('network', 'Unreadable session');
  // `returned`: back from the bank, the outcome on its way.
  return data.state === 'expired'
    ? { kind: 'expired' }
    : (parseOutcome(data.outcome) ?? { kind: 'pending', returned: data.state === 'returned' });
}

/** POST {base}/sessions/lookup. Rejects with {@link ProxyRequestError} when the proxy cannot answer. */
export async function fetchSession(base: URL, sessionId: string, signal?: AbortSignal): Promise<SessionSnapshot> {
  try {
    return readSession(await postSession(base, 'lookup', sessionId, { signal }));
  } catch (error) {
    // Not found: ended and forgotten. Any other refusal is the proxy's failure, not a verdict on the session.
    if ((error as ProxyRequestError).status === 404) return { kind: 'expired' };
    throw (error as ProxyRequestError).kind ? new ProxyRequestError('network', (error as Error).message) : error;
  }
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
export function watchSession(
  base: URL,
  session: Pick<StartedSession, 'sessionId' | 'expiresAt'>,
  ended: (end: WatchEnd) => void,
): SessionWatch {
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
    // http: → ws:, https: → wss: (the base is always one of the two, see attributes.ts).
    url.protocol = url.protocol.replace('http', 'ws');
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
      } else if ((message.type === 'expired' && ours) || message.code === 'unknown_session') {
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
  if (Number.isFinite(untilExpiry))
    expiryTimer = setTimeout(checkNow, Math.max(untilExpiry, 0) + timing.expiryCheckDelayMs);

  connect();
  return { close: stop };
}
