// Test doubles for the element's outside world: the proxy's HTTP API (a fetch stub), its WebSocket (a
// scripted fake socket) and window.open (a fake tab). Each test drives them step by step.
import sinon from 'sinon';
import { timing } from '../../widget/settings.ts';
import { BANK_STEP_WORDS } from '../../proxy/words/bank-step.ts';

/** Resolves with the next `name` event on `target`. */
export function once<T = unknown>(target: EventTarget, name: string): Promise<CustomEvent<T>> {
  return new Promise((resolve) =>
    target.addEventListener(name, (event) => resolve(event as CustomEvent<T>), { once: true }),
  );
}

/** Resolves after the page has had a chance to run pending tasks (fetch stubs, timers of 0 ms). */
export function tick(ms = 0): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Waits (bounded) until `check` holds; fails with `what` otherwise. */
export async function until(check: () => boolean, what: string, limitMs = 3000): Promise<void> {
  const deadline = Date.now() + limitMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await tick(5);
  }
}

/**
 * Waits for the element's first screen. With a link token it first asks the proxy what to offer a
 * returning shopper, and draws nothing (no `state` attribute) until the answer (or a failure) comes.
 */
export async function drawn<T extends HTMLElement>(el: T): Promise<T> {
  await until(() => el.hasAttribute('state'), 'the first screen');
  return el;
}

/** A WebSocket whose server side the test plays. */
export class FakeSocket extends EventTarget {
  static instances: FakeSocket[] = [];
  static readonly CONNECTING = 0;
  static readonly OPEN = 1;
  static readonly CLOSED = 3;
  readonly sent: unknown[] = [];
  readyState = 0;
  onopen: ((event: Event) => void) | null = null;
  onmessage: ((event: MessageEvent) => void) | null = null;
  onclose: ((event: CloseEvent) => void) | null = null;
  onerror: ((event: Event) => void) | null = null;

  constructor(readonly url: string) {
    super();
    FakeSocket.instances.push(this);
  }
  static get last(): FakeSocket {
    const socket = FakeSocket.instances.at(-1);
    if (!socket) throw new Error('no WebSocket was opened');
    return socket;
  }
  send(data: string): void {
    this.sent.push(JSON.parse(data));
  }
  close(): void {
    this.readyState = 3;
  }
  /** Server accepts the connection. */
  accept(): void {
    this.readyState = 1;
    this.onopen?.(new Event('open'));
  }
  /** Server sends a JSON message. */
  receive(message: unknown): void {
    this.onmessage?.(new MessageEvent('message', { data: JSON.stringify(message) }));
  }
  /** The connection ends (before or after it opened). */
  drop(code = 1006): void {
    this.readyState = 3;
    this.onclose?.(new CloseEvent('close', { code }));
  }
}

export interface FakeTab {
  opener: unknown;
  closed: boolean;
  location: { href: string };
  document: { title: string; body: { textContent: string } };
  focus: sinon.SinonSpy;
  close: sinon.SinonSpy;
}

export function fakeTab(): FakeTab {
  const tab: FakeTab = {
    opener: window,
    closed: false,
    location: { href: 'about:blank' },
    document: { title: '', body: { textContent: '' } },
    focus: sinon.spy(),
    close: sinon.spy(() => {
      tab.closed = true;
    }),
  };
  return tab;
}

type Reply = { status: number; body?: unknown } | Error;
type Route = (request: Request) => Reply | Promise<Reply>;

/** A scripted proxy: `routes['POST /obv/verifications']` answers that request; unknown requests get 404. */
export class FakeProxy {
  readonly requests: Request[] = [];
  readonly bodies: unknown[] = [];
  routes: Record<string, Route> = {};

  /**
   * The starts the element sent (POST …/verifications) with their bodies, without its other requests
   * (with a link token it first asks for the link session's saved accounts, with the same body).
   */
  get starts(): { request: Request; body: unknown }[] {
    return this.requests.flatMap((request, index) =>
      request.method === 'POST' && new URL(request.url).pathname.endsWith('/verifications')
        ? [{ request, body: this.bodies[index] }]
        : [],
    );
  }

  install(): void {
    sinon.stub(window, 'fetch').callsFake(async (input: RequestInfo | URL, init?: RequestInit) => {
      const request = new Request(input, init);
      this.requests.push(request);
      this.bodies.push(request.method === 'POST' ? await request.clone().json() : undefined);
      const path = new URL(request.url).pathname;
      const route = this.routes[`${request.method} ${path}`];
      const reply = route ? await route(request) : { status: 404, body: { title: 'Not Found', status: 404 } };
      if (reply instanceof Error) throw reply;
      const type = reply.status >= 400 ? 'application/problem+json' : 'application/json';
      return new Response(reply.body === undefined ? null : JSON.stringify(reply.body), {
        status: reply.status,
        headers: { 'Content-Type': type },
      });
    });
  }
}

/** A start's answer, with the proxy's words for the states that follow (as the real proxy sends them). */
export const SESSION = {
  sessionId: 's-123',
  consumerUrl: 'https://bank.example/consumer/v-1?t=one-time',
  expiresAt: new Date(Date.now() + 30 * 60_000).toISOString(),
  words: BANK_STEP_WORDS,
};

export const ACCOUNT = {
  linkRef: 'ref_4321',
  accountLabel: 'Checking ••••4321',
  fiName: 'Sandbox Federal Bank',
  fiAccountType: 'CHECKING',
};

const original = { ...timing };

/** Replaces the network, the tab and the clock-driven delays; call `restore()` after each test. */
export function setUpWorld(options: { popup?: 'open' | 'blocked' } = {}) {
  FakeSocket.instances = [];
  // Silent sockets and retries while polling only matter to the tests that lower these two on purpose.
  Object.assign(timing, {
    reconnectBaseMs: 5,
    reconnectMaxMs: 20,
    pollIntervalMs: 10,
    pollFailuresBeforeError: 3,
    subscribeTimeoutMs: 5000,
    socketRetryWhilePollingMs: 5000,
  });
  sinon.replace(window, 'WebSocket', FakeSocket as unknown as typeof WebSocket);
  const proxy = new FakeProxy();
  proxy.routes['POST /obv/verifications'] = () => ({ status: 201, body: SESSION });
  proxy.install();
  const tab = fakeTab();
  const open = sinon.stub(window, 'open').returns(options.popup === 'blocked' ? null : (tab as unknown as Window));
  // The element opens the tab from its sandboxed frame (the bank's page then cannot navigate the checkout):
  // the frame's window is this one here, so the stub sees that call too. The real tabs are tested in
  // test/e2e/bank-tab.test.ts (headful Chromium).
  const frameWindow = Object.getOwnPropertyDescriptor(HTMLIFrameElement.prototype, 'contentWindow')!.get!;
  sinon.stub(HTMLIFrameElement.prototype, 'contentWindow').get(function (this: HTMLIFrameElement) {
    return this.getRootNode() instanceof ShadowRoot ? window : frameWindow.call(this);
  });
  sessionStorage.clear();
  return {
    proxy,
    tab,
    open,
    restore() {
      sinon.restore();
      Object.assign(timing, original);
      sessionStorage.clear();
    },
  };
}

export type World = ReturnType<typeof setUpWorld>;

/** Sets up a fresh world before each test of the surrounding `describe` and restores it after. */
export function useWorld(options: Parameters<typeof setUpWorld>[0] = {}): () => World {
  let world: World | undefined;
  beforeEach(() => {
    world = setUpWorld(options);
  });
  afterEach(() => world?.restore());
  return () => {
    if (!world) throw new Error('useWorld() is only available inside a test');
    return world;
  };
}
