// The linking flow end to end inside the page: start, tab, socket outcome, cancel, blocked pop-ups,
// socket fallbacks and resuming after a reload. The proxy, the socket and the tab are test doubles.
import { expect, fixture, html } from '@open-wc/testing';
import sinon from 'sinon';
import '../../widget/obv-link-account.ts';
import type { ObvLinkAccountElement } from '../../widget/obv-link-account-element.ts';
import { pendingKey } from '../../widget/pending-session.ts';
import { timing } from '../../widget/settings.ts';
import { ACCOUNT, FakeSocket, SESSION, drawn, once, useWorld, tick, until } from './helpers.ts';

function part(el: ObvLinkAccountElement, name: string): HTMLElement {
  const found = el.shadowRoot?.querySelector<HTMLElement>(`[part~="${name}"]`);
  if (!found) throw new Error(`no part ${name} in state ${el.state}`);
  return found;
}

function statusText(el: ObvLinkAccountElement): string {
  return part(el, 'status').textContent?.replace(/\s+/g, ' ').trim() ?? '';
}

/** The link token of the checkout `mount()` makes (what the merchant's server got from POST /link-sessions). */
const LINK_TOKEN = `lt_${'order-t1'.repeat(4)}`;

async function mount(attributes = ''): Promise<ObvLinkAccountElement> {
  const el = await fixture<ObvLinkAccountElement>(
    html`<obv-link-account proxy-url="/obv" link-token=${LINK_TOKEN}></obv-link-account>`,
  );
  for (const pair of attributes.split(' ').filter(Boolean)) {
    const [name, value = ''] = pair.split('=');
    el.setAttribute(name!, value);
  }
  await el.updateComplete;
  return drawn(el);
}

/** Clicks the main button and waits until the element waits on the socket. */
async function startWaiting(el: ObvLinkAccountElement): Promise<FakeSocket> {
  part(el, 'button').click();
  await until(() => el.state === 'waiting' && FakeSocket.instances.length > 0, 'the element to wait on a socket');
  const socket = FakeSocket.last;
  socket.accept();
  socket.receive({ type: 'subscribed', sessionId: SESSION.sessionId, state: 'pending' });
  return socket;
}

describe('<obv-link-account> flow', () => {
  const world = useWorld();

  it('starts idle with its state reflected and the default field name', async () => {
    const el = await mount();
    expect(el.state).to.equal('idle');
    expect(el.getAttribute('state')).to.equal('idle');
    expect(el.getAttribute('name')).to.equal('linkRef');
    expect(part(el, 'button').textContent).to.contain('Link your bank account');
  });

  it('opens the holding page in the tab inside the click, posts the verification with an idempotency key, then navigates the tab on', async () => {
    const el = await mount();
    const started = once<{ idempotencyKey: string }>(el, 'obv-start');
    const opened = once<{ sessionId: string; consumerUrl: string }>(el, 'obv-open');
    part(el, 'button').click();
    // Synchronously, before any network answer: otherwise pop-up blockers would stop the tab.
    expect(world().open.calledOnce).to.equal(true);
    expect(world().open.firstCall.args[0]).to.equal(new URL('/obv/connecting?lang=undefined', location.href).href);
    expect(world().open.firstCall.args[1]).to.match(/^obv-bank\w+$/);
    expect(el.state).to.equal('starting');
    const { detail: start } = await started;
    const { detail: open } = await opened;
    expect(open).to.deep.equal({ sessionId: SESSION.sessionId, consumerUrl: SESSION.consumerUrl });
    expect(world().tab.location.href).to.equal(SESSION.consumerUrl);
    const { request, body } = world().proxy.starts[0]!;
    expect(request.method).to.equal('POST');
    expect(new URL(request.url).pathname).to.equal('/obv/verifications');
    expect(request.headers.get('Idempotency-Key')).to.equal(start.idempotencyKey);
    expect(body).to.deep.equal({ linkToken: LINK_TOKEN });
    await el.updateComplete;
    expect(el.state).to.equal('waiting');
    expect(statusText(el)).to.contain('Continue at your bank');
  });

  it("shows the words the start's answer carries in its own language, and a page's `strings` over them", async () => {
    world().proxy.routes['POST /obv/verifications'] = () => ({
      status: 201,
      body: {
        ...SESSION,
        words: {
          en: { waitingTitle: 'EN from the proxy' },
          es: { waitingTitle: 'ES del proxy', showTab: 'Ir al banco' },
        },
      },
    });
    const el = await mount('language=es');
    el.strings = { showTab: 'Mi banco' };
    await startWaiting(el);
    await el.updateComplete;
    expect(statusText(el)).to.contain('ES del proxy');
    expect(part(el, 'button').textContent).to.equal('Mi banco');
    // The words before the answer are the bundle's own.
    expect(part(el, 'secondary-button').textContent).to.equal('Cancelar');
  });

  it('subscribes over the proxy WebSocket and shows the linked account on a success result', async () => {
    const el = await mount();
    const socket = await startWaiting(el);
    expect(new URL(socket.url).pathname).to.equal('/obv/ws');
    expect(new URL(socket.url).protocol).to.equal('ws:');
    expect(socket.sent).to.deep.equal([{ type: 'subscribe', sessionId: SESSION.sessionId }]);
    const success = once<typeof ACCOUNT>(el, 'obv-success');
    socket.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } });
    // Without the proxy's words, the shown and spoken lines are the bare label.
    expect((await success).detail).to.deep.equal({
      ...ACCOUNT,
      displayLabel: ACCOUNT.accountLabel,
      spokenLabel: ACCOUNT.accountLabel,
    });
    await el.updateComplete;
    expect(el.state).to.equal('success');
    expect(el.getAttribute('state')).to.equal('success');
    expect(el.account).to.deep.equal(ACCOUNT);
    const account = part(el, 'account').textContent ?? '';
    expect(account).to.contain('Sandbox Federal Bank').and.contain('Checking ••••4321');
    expect(part(el, 'button').textContent).to.contain('Change');
  });

  it('shows the provider message and offers to try again on a failure result', async () => {
    const el = await mount();
    const socket = await startWaiting(el);
    const failure = once<{ code: string; message: string }>(el, 'obv-failure');
    socket.receive({
      type: 'result',
      sessionId: SESSION.sessionId,
      outcome: { status: 'failure', code: 'ACCOUNT_LOCKED', message: 'This account is locked. Contact your bank.' },
    });
    expect((await failure).detail).to.deep.equal({
      code: 'ACCOUNT_LOCKED',
      message: 'This account is locked. Contact your bank.',
    });
    await el.updateComplete;
    expect(el.state).to.equal('failure');
    expect(part(el, 'error').textContent).to.equal('This account is locked. Contact your bank.');
    const again = once<{ idempotencyKey: string }>(el, 'obv-start');
    part(el, 'button').click();
    const keys = [(await again).detail.idempotencyKey];
    expect(world().open.callCount).to.equal(2);
    expect(world().proxy.starts[1]!.request.headers.get('Idempotency-Key')).to.equal(keys[0]);
    expect(world().proxy.starts[0]!.request.headers.get('Idempotency-Key')).not.to.equal(keys[0]);
  });

  it('reports an expired session with its own message', async () => {
    const el = await mount();
    const socket = await startWaiting(el);
    const error = once<{ kind: string }>(el, 'obv-error');
    socket.receive({ type: 'expired', sessionId: SESSION.sessionId });
    expect((await error).detail.kind).to.equal('expired');
    await el.updateComplete;
    expect(el.state).to.equal('expired');
    expect(statusText(el)).to.contain('Your bank session timed out');
  });

  it('fires obv-state-change with the previous state on every transition', async () => {
    const el = await mount();
    const changes: Array<{ state: string; previous: string }> = [];
    el.addEventListener('obv-state-change', (event) => changes.push(event.detail));
    const socket = await startWaiting(el);
    socket.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } });
    expect(changes).to.deep.equal([
      { state: 'starting', previous: 'idle' },
      { state: 'waiting', previous: 'starting' },
      { state: 'success', previous: 'waiting' },
    ]);
  });

  it('brings the bank tab to the front', async () => {
    const el = await mount();
    await startWaiting(el);
    await el.updateComplete;
    part(el, 'button').click();
    // By name: Chromium refuses tab.focus() from a page that is not the tab's opener.
    // Named as the tab was opened (a name of its own per bank step).
    expect(world().open.lastCall.args).to.deep.equal(['', world().open.firstCall.args[1]]);
    expect(world().open.firstCall.args[1]).to.match(/^obv-bank\w+$/);
  });

  it('says the bank tab was closed, offers the link and moves focus to it, when the consumer closed the bank tab', async () => {
    world().proxy.routes['POST /obv/sessions/lookup'] = () => ({
      status: 200,
      body: { sessionId: SESSION.sessionId, state: 'pending', expiresAt: SESSION.expiresAt },
    });
    const el = await mount();
    await startWaiting(el);
    await el.updateComplete;
    world().tab.closed = true;
    part(el, 'button').focus();
    part(el, 'button').click();
    await until(() => !!el.shadowRoot!.querySelector('[part~="link"]'), 'the link');
    await el.updateComplete;
    expect(world().open.calledOnce).to.equal(true);
    const link = part(el, 'link') as HTMLAnchorElement;
    expect(link.href).to.equal(SESSION.consumerUrl);
    expect(statusText(el)).to.contain('Your bank’s page was closed');
    expect(el.state).to.equal('waiting');
    expect(el.shadowRoot!.activeElement).to.equal(link);
  });

  it('cancels: closes the tab, stops listening, fires obv-cancel and returns to idle', async () => {
    const el = await mount();
    const socket = await startWaiting(el);
    await el.updateComplete;
    const cancelled = once<{ sessionId?: string }>(el, 'obv-cancel');
    part(el, 'secondary-button').click();
    expect((await cancelled).detail).to.deep.equal({ sessionId: SESSION.sessionId });
    expect(world().tab.close.calledOnce).to.equal(true);
    expect(socket.readyState).to.equal(3);
    expect(el.state).to.equal('idle');
    await el.updateComplete;
    expect(statusText(el)).to.contain('Bank linking cancelled');
    // A late result for the cancelled session changes nothing.
    socket.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } });
    expect(el.state).to.equal('idle');
  });

  it("keeps a success that landed at the moment of Cancel: the proxy's answer to the cancel says it, and the account is shown", async () => {
    // The bank step succeeded at the proxy just before the cancel reached it: the cancel cannot undo it, and
    // the merchant's server hears link.succeeded. The shopper must see that account, not "cancelled".
    world().proxy.routes['POST /obv/sessions/cancel'] = () => ({
      status: 200,
      body: {
        sessionId: SESSION.sessionId,
        state: 'succeeded',
        expiresAt: SESSION.expiresAt,
        outcome: { status: 'success', ...ACCOUNT },
      },
    });
    const el = await mount();
    await startWaiting(el);
    await el.updateComplete;
    const succeeded = once<{ linkRef: string }>(el, 'obv-success');
    part(el, 'secondary-button').click();
    expect((await succeeded).detail.linkRef).to.equal(ACCOUNT.linkRef);
    expect(el.state).to.equal('success');
    expect(el.value).to.equal(ACCOUNT.linkRef);
  });

  it('follows a session whose cancel the proxy refused because it ended first, until its outcome is released', async () => {
    // With the bank step's binding on, a success may be held back from the starting browser for a moment:
    // the cancel's answer then says "returned" (back from the bank) and the success comes after.
    world().proxy.routes['POST /obv/sessions/cancel'] = () => ({
      status: 200,
      body: { sessionId: SESSION.sessionId, state: 'returned', expiresAt: SESSION.expiresAt },
    });
    const el = await mount();
    await startWaiting(el);
    const succeeded = once(el, 'obv-success');
    el.cancel();
    await until(() => FakeSocket.instances.length > 1, 'the session followed again');
    FakeSocket.last.accept();
    FakeSocket.last.receive({
      type: 'result',
      sessionId: SESSION.sessionId,
      outcome: { status: 'success', ...ACCOUNT },
    });
    await succeeded;
    expect(el.value).to.equal(ACCOUNT.linkRef);
  });

  it('Escape while waiting for the bank cancels, as the Cancel button does', async () => {
    const el = await mount();
    await startWaiting(el);
    await el.updateComplete;
    const cancelled = once<{ sessionId?: string }>(el, 'obv-cancel');
    part(el, 'button').dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }));
    expect((await cancelled).detail).to.deep.equal({ sessionId: SESSION.sessionId });
    expect(el.state).to.equal('idle');
    expect(world().tab.close.calledOnce).to.equal(true);
  });

  it('leaves Escape alone where nothing is open (a dialog around the element may close)', async () => {
    const el = await mount();
    const escape = new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true, cancelable: true });
    part(el, 'button').dispatchEvent(escape);
    expect(escape.defaultPrevented).to.equal(false);
    expect(el.state).to.equal('idle');
  });

  it('sends the start before it opens the bank tab: the request leaves at once, opening a tab holds the page a while', async () => {
    const el = await mount();
    part(el, 'button').click();
    const fetchStub = window.fetch as unknown as sinon.SinonStub;
    const start = fetchStub.getCalls().find((call) => String(call.args[0]).endsWith('/verifications'));
    expect(start, 'the start was sent within the click').to.not.equal(undefined);
    expect(world().open.calledOnce, 'and the tab opened within the click').to.equal(true);
    expect(world().open.firstCall.calledAfter(start!)).to.equal(true);
    await until(() => el.state === 'waiting', 'waiting');
  });

  it('cancels while starting and ignores the late answer of the proxy', async () => {
    let answer!: () => void;
    world().proxy.routes['POST /obv/verifications'] = () =>
      new Promise((resolve) => (answer = () => resolve({ status: 201, body: SESSION })));
    const el = await mount();
    part(el, 'button').click();
    await el.updateComplete;
    expect(el.state).to.equal('starting');
    el.cancel();
    await until(() => typeof answer === 'function', 'the request to reach the proxy');
    answer();
    await tick(10);
    expect(el.state).to.equal('idle');
    expect(world().tab.close.calledOnce).to.equal(true);
    expect(FakeSocket.instances).to.have.length(0);
  });

  it('resumes watching after being moved in the page while waiting', async () => {
    const el = await mount();
    const first = await startWaiting(el);
    const parent = el.parentElement!;
    el.remove();
    expect(first.readyState).to.equal(3);
    parent.append(el);
    await until(() => FakeSocket.instances.length === 2, 'a new socket after the move');
    FakeSocket.last.accept();
    expect(FakeSocket.last.sent).to.deep.equal([{ type: 'subscribe', sessionId: SESSION.sessionId }]);
  });

  it('goes back to idle when moved in the page while starting', async () => {
    world().proxy.routes['POST /obv/verifications'] = () => new Promise(() => undefined);
    const el = await mount();
    part(el, 'button').click();
    const parent = el.parentElement!;
    el.remove();
    parent.append(el);
    expect(el.state).to.equal('idle');
    expect(world().tab.close.calledOnce).to.equal(true);
  });

  it('falls back to polling the session when the WebSocket cannot connect', async () => {
    let polls = 0;
    world().proxy.routes['POST /obv/sessions/lookup'] = () => {
      polls += 1;
      return polls < 2
        ? { status: 200, body: { sessionId: SESSION.sessionId, state: 'pending', expiresAt: SESSION.expiresAt } }
        : {
            status: 200,
            body: {
              sessionId: SESSION.sessionId,
              state: 'succeeded',
              expiresAt: SESSION.expiresAt,
              outcome: { status: 'success', ...ACCOUNT },
            },
          };
    };
    const el = await mount();
    const success = once<typeof ACCOUNT>(el, 'obv-success');
    part(el, 'button').click();
    for (let n = 1; n <= 3; n += 1) {
      await until(() => FakeSocket.instances.length === n, `socket ${n}`);
      expect(polls, 'no polling before the third failed socket').to.equal(0);
      FakeSocket.last.drop();
    }
    expect((await success).detail.linkRef).to.equal(ACCOUNT.linkRef);
    expect(polls).to.equal(2);
    expect(FakeSocket.instances).to.have.length(3);
  });

  it('falls back to polling when sockets open and are then dropped by a middlebox, and still retries the socket', async () => {
    let polls = 0;
    world().proxy.routes['POST /obv/sessions/lookup'] = () => {
      polls += 1;
      return { status: 200, body: { sessionId: SESSION.sessionId, state: 'pending', expiresAt: SESSION.expiresAt } };
    };
    timing.socketRetryWhilePollingMs = 30;
    const el = await mount();
    part(el, 'button').click();
    for (let n = 1; n <= 3; n += 1) {
      await until(() => FakeSocket.instances.length === n, `socket ${n}`);
      FakeSocket.last.accept();
      FakeSocket.last.receive({ type: 'subscribed', sessionId: SESSION.sessionId, state: 'pending' });
      FakeSocket.last.drop(1006);
    }
    await until(() => polls >= 2, 'polling');
    // The socket is tried again now and then; when it works it delivers the outcome.
    await until(() => FakeSocket.instances.length === 4, 'a later socket attempt');
    const success = once<typeof ACCOUNT>(el, 'obv-success');
    FakeSocket.last.accept();
    FakeSocket.last.receive({
      type: 'result',
      sessionId: SESSION.sessionId,
      outcome: { status: 'success', ...ACCOUNT },
    });
    expect((await success).detail.linkRef).to.equal(ACCOUNT.linkRef);
    // Counted when sent (the fake proxy answers a poll already on its way a moment later).
    const sent = () => world().proxy.requests.filter((request) => request.url.endsWith('/sessions/lookup')).length;
    const pollsAtSuccess = sent();
    await tick(50);
    expect(sent(), 'polling stops with the outcome').to.equal(pollsAtSuccess);
  });

  it('counts a socket that opens but never confirms the subscription as failed, and polls after three', async () => {
    world().proxy.routes['POST /obv/sessions/lookup'] = () => ({
      status: 200,
      body: {
        sessionId: SESSION.sessionId,
        state: 'succeeded',
        expiresAt: SESSION.expiresAt,
        outcome: { status: 'success', ...ACCOUNT },
      },
    });
    timing.subscribeTimeoutMs = 20;
    const el = await mount();
    const success = once<typeof ACCOUNT>(el, 'obv-success');
    part(el, 'button').click();
    await until(() => FakeSocket.instances.length === 1, 'a socket');
    FakeSocket.last.accept();
    expect((await success).detail.linkRef).to.equal(ACCOUNT.linkRef);
    expect(FakeSocket.instances).to.have.length(3);
    expect(FakeSocket.instances.every((socket) => socket.readyState === 3)).to.equal(true);
  });

  it('applies exactly one outcome when the poll and the socket both deliver it', async () => {
    let answer!: () => void;
    const succeeded = {
      status: 200,
      body: {
        sessionId: SESSION.sessionId,
        state: 'succeeded',
        expiresAt: SESSION.expiresAt,
        outcome: { status: 'success', ...ACCOUNT },
      },
    };
    world().proxy.routes['POST /obv/sessions/lookup'] = () =>
      new Promise((resolve) => (answer = () => resolve(succeeded)));
    timing.socketRetryWhilePollingMs = 10;
    const el = await mount();
    const events: string[] = [];
    for (const name of ['obv-success', 'obv-failure', 'obv-error']) el.addEventListener(name, () => events.push(name));
    part(el, 'button').click();
    for (let n = 1; n <= 3; n += 1) {
      await until(() => FakeSocket.instances.length === n, `socket ${n}`);
      FakeSocket.last.drop();
    }
    await until(
      () => typeof answer === 'function' && FakeSocket.instances.length === 4,
      'a poll in flight and a new socket',
    );
    const socket = FakeSocket.last;
    socket.accept();
    socket.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } });
    answer();
    socket.receive({
      type: 'result',
      sessionId: SESSION.sessionId,
      outcome: { status: 'failure', code: 'X', message: 'late' },
    });
    await tick(30);
    expect(events).to.deep.equal(['obv-success']);
    expect(el.state).to.equal('success');
  });

  it('asks the proxy instead of reconnecting when the socket closes normally without an outcome', async () => {
    let polls = 0;
    world().proxy.routes['POST /obv/sessions/lookup'] = () => {
      polls += 1;
      return { status: 200, body: { sessionId: SESSION.sessionId, state: 'expired', expiresAt: SESSION.expiresAt } };
    };
    const el = await mount();
    const socket = await startWaiting(el);
    const error = once<{ kind: string }>(el, 'obv-error');
    socket.drop(1000);
    expect((await error).detail.kind).to.equal('expired');
    expect(polls).to.equal(1);
    expect(FakeSocket.instances).to.have.length(1);
  });

  it('neither reconnects nor polls after the proxy closes the socket with 1000 after the result', async () => {
    const el = await mount();
    const socket = await startWaiting(el);
    socket.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } });
    socket.drop(1000);
    await tick(50);
    expect(el.state).to.equal('success');
    expect(FakeSocket.instances).to.have.length(1);
    expect(world().proxy.requests.filter((request) => request.method === 'GET')).to.have.length(0);
  });

  it('reconnects with a new subscription after an open socket drops, and takes the result from it', async () => {
    const el = await mount();
    const first = await startWaiting(el);
    first.drop();
    await until(() => FakeSocket.instances.length === 2, 'a reconnect');
    const second = FakeSocket.last;
    second.accept();
    expect(second.sent).to.deep.equal([{ type: 'subscribe', sessionId: SESSION.sessionId }]);
    const success = once(el, 'obv-success');
    second.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } });
    await success;
    expect(el.state).to.equal('success');
  });

  it('treats an unknown session on the socket as expired', async () => {
    const el = await mount();
    const socket = await startWaiting(el);
    const error = once<{ kind: string }>(el, 'obv-error');
    socket.receive({ type: 'error', code: 'unknown_session', message: 'no such session' });
    expect((await error).detail.kind).to.equal('expired');
  });

  it('asks the proxy at once when the return page announces the consumer came back', async () => {
    world().proxy.routes['POST /obv/sessions/lookup'] = () => ({
      status: 200,
      body: {
        sessionId: SESSION.sessionId,
        state: 'failed',
        expiresAt: SESSION.expiresAt,
        outcome: {
          status: 'failure',
          code: 'CONSUMER_CANCELLED',
          message: 'You cancelled the verification at your bank.',
        },
      },
    });
    const el = await mount();
    await startWaiting(el);
    const failure = once<{ code: string }>(el, 'obv-failure');
    const channel = new BroadcastChannel('obv-link');
    // The return page names no session (any same-origin page hears the channel): the element asks about its own.
    channel.postMessage({ type: 'obv-returned' });
    channel.close();
    expect((await failure).detail.code).to.equal('CONSUMER_CANCELLED');
  });

  it('asks the proxy when the page becomes visible again, not while it is hidden, though its socket looks healthy', async () => {
    const sessionPath = '/obv/sessions/lookup';
    world().proxy.routes[`POST ${sessionPath}`] = () => ({
      status: 200,
      body: {
        sessionId: SESSION.sessionId,
        state: 'succeeded',
        expiresAt: SESSION.expiresAt,
        outcome: { status: 'success', ...ACCOUNT },
      },
    });
    const sessionReads = () =>
      world().proxy.requests.filter((r) => r.method === 'POST' && new URL(r.url).pathname === sessionPath).length;
    const el = await mount();
    await startWaiting(el);
    const success = once(el, 'obv-success');
    try {
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });
      document.dispatchEvent(new Event('visibilitychange'));
      await tick();
      expect(sessionReads()).to.equal(0);
      Object.defineProperty(document, 'hidden', { configurable: true, get: () => false });
      document.dispatchEvent(new Event('visibilitychange'));
      await success;
      expect(sessionReads()).to.equal(1);
      expect(el.state).to.equal('success');
    } finally {
      delete (document as { hidden?: boolean }).hidden;
    }
  });

  it('reports a network error when the proxy cannot be reached, and recovers on try again', async () => {
    world().proxy.routes['POST /obv/verifications'] = () => new TypeError('Failed to fetch');
    const el = await mount();
    const error = once<{ kind: string; message: string }>(el, 'obv-error');
    part(el, 'button').click();
    expect((await error).detail.kind).to.equal('network');
    await el.updateComplete;
    expect(el.state).to.equal('error');
    expect(world().tab.close.calledOnce).to.equal(true);
    expect(statusText(el)).to.contain('Connection problem');
    world().proxy.routes['POST /obv/verifications'] = () => ({ status: 201, body: SESSION });
    part(el, 'button').click();
    await until(() => el.state === 'waiting', 'the retry to wait');
  });

  it('fires every event bubbling and composed, so a page can listen on document from outside a shadow root', async () => {
    const names = [
      'obv-start',
      'obv-open',
      'obv-state-change',
      'obv-success',
      'obv-cancel',
      'obv-failure',
      'obv-error',
    ] as const;
    const seen: Event[] = [];
    const record = (event: Event) => seen.push(event);
    for (const name of names) document.addEventListener(name, record);
    try {
      // Inside another component's shadow root: only composed events reach document.
      const host = await fixture<HTMLDivElement>(html`<div></div>`);
      const el = document.createElement('obv-link-account');
      host.attachShadow({ mode: 'open' }).append(el);
      await el.updateComplete;
      // Each step presses the main button of the screen the one before left: link, Change, Change, Try again.
      const steps: unknown[] = [
        { type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } },
        'cancel',
        { type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'failure', code: 'X', message: 'No.' } },
        { type: 'expired', sessionId: SESSION.sessionId },
      ];
      for (const step of steps) {
        const socket = await startWaiting(el);
        if (step === 'cancel') el.cancel();
        else socket.receive(step);
        await el.updateComplete;
      }
      expect(el.state).to.equal('expired');
    } finally {
      for (const name of names) document.removeEventListener(name, record);
    }
    expect([...new Set(seen.map((event) => event.type))].sort()).to.deep.equal([...names].sort());
    for (const event of seen) {
      expect(event, event.type).to.be.instanceOf(CustomEvent);
      expect(event.bubbles && event.composed, `${event.type} bubbles and is composed`).to.equal(true);
    }
  });

  it('treats a 1001 "going away" close as a reconnect, never as a failure that leads to polling', async () => {
    let polls = 0;
    world().proxy.routes['POST /obv/sessions/lookup'] = () => {
      polls += 1;
      return { status: 200, body: { sessionId: SESSION.sessionId, state: 'pending', expiresAt: SESSION.expiresAt } };
    };
    const el = await mount();
    part(el, 'button').click();
    // More 1001s in a row than the failures that would start polling: each is just a reconnect.
    for (let n = 1; n <= 5; n += 1) {
      await until(() => FakeSocket.instances.length === n, `socket ${n}`);
      FakeSocket.last.accept();
      FakeSocket.last.drop(1001);
    }
    await until(() => FakeSocket.instances.length === 6, 'socket 6');
    expect(polls, 'no polling after 1001s').to.equal(0);
    expect(el.state).to.equal('waiting');
  });

  it('shows a shopper-friendly message for a 403 from a disallowed origin and logs the detail to the console', async () => {
    const warn = sinon.stub(console, 'warn');
    try {
      world().proxy.routes['POST /obv/verifications'] = () => ({
        status: 403,
        body: {
          title: 'Forbidden',
          status: 403,
          detail: "This page's origin is not allowed to use the proxy (add it to OBV_ALLOWED_ORIGINS).",
        },
      });
      const el = await mount();
      const error = once<{ kind: string; message: string }>(el, 'obv-error');
      part(el, 'button').click();
      expect((await error).detail.kind).to.equal('configuration');
      await el.updateComplete;
      expect(statusText(el)).to.contain('Bank linking is not available');
      expect(statusText(el)).not.to.contain('OBV_ALLOWED_ORIGINS');
      expect(String(warn.firstCall?.args.join(' '))).to.contain('OBV_ALLOWED_ORIGINS');
      expect((await error).detail.message).to.contain('OBV_ALLOWED_ORIGINS');
    } finally {
      warn.restore();
    }
  });

  it('reports a proxy 5xx as a network error and a 4xx as a configuration error', async () => {
    world().proxy.routes['POST /obv/verifications'] = () => ({
      status: 503,
      body: { title: 'Service Unavailable', status: 503 },
    });
    const el = await mount();
    let error = once<{ kind: string; message: string }>(el, 'obv-error');
    part(el, 'button').click();
    expect((await error).detail.kind).to.equal('network');
    world().proxy.routes['POST /obv/verifications'] = () => ({
      status: 400,
      body: {
        title: 'Bad Request',
        status: 400,
        detail: 'Invalid body: amount: Too large',
        errors: [{ path: 'amount', message: 'Too large' }],
      },
    });
    error = once(el, 'obv-error');
    part(el, 'button').click();
    const { detail } = await error;
    expect(detail.kind).to.equal('configuration');
    expect(detail.message).to.contain('amount: Too large');
    // The refusal stays on screen (it is not an attribute the element can re-check), with "Try again".
    await el.updateComplete;
    await tick(10);
    expect(el.state).to.equal('error');
    expect(statusText(el)).to.contain('Bank linking is not available');
    expect(statusText(el)).not.to.contain('Too large');
    expect(part(el, 'error').textContent).to.equal('Please choose another way to pay, or try again later.');
    world().proxy.routes['POST /obv/verifications'] = () => ({ status: 201, body: SESSION });
    expect(part(el, 'button').textContent).to.contain('Try again');
    part(el, 'button').click();
    await until(() => el.state === 'waiting', 'the retry to wait');
  });
});

describe('<obv-link-account> with a blocked pop-up', () => {
  useWorld({ popup: 'blocked' });

  it('fires popup-blocked and offers a link that opens the bank page without an opener', async () => {
    const el = await mount();
    const error = once<{ kind: string }>(el, 'obv-error');
    part(el, 'button').click();
    expect((await error).detail.kind).to.equal('popup-blocked');
    await el.updateComplete;
    expect(el.state).to.equal('waiting');
    const link = part(el, 'link') as HTMLAnchorElement;
    expect(link.href).to.equal(SESSION.consumerUrl);
    expect(link.target).to.equal('_blank');
    expect(link.rel).to.equal('noopener');
    expect(statusText(el)).to.contain('Your browser blocked your bank’s page');
    const opened = once(el, 'obv-open');
    // Keep the test page where it is: only the element's reaction to the click matters.
    link.addEventListener('click', (event) => event.preventDefault(), { once: true });
    link.click();
    await opened;
    const socket = FakeSocket.last;
    socket.accept();
    const success = once(el, 'obv-success');
    socket.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } });
    await success;
  });
});

describe('<obv-link-account> after a reload', () => {
  const world = useWorld();

  /** What the element stores for the link session `mount()` names (the tail of its token, not the whole token). */
  const remembered = (purchase = `link …${LINK_TOKEN.slice(-8)}`) => JSON.stringify({ ...SESSION, for: purchase });

  it('resumes the session remembered in sessionStorage instead of losing it', async () => {
    sessionStorage.setItem(pendingKey('linkRef', new URL('/obv', location.href)), remembered());
    const el = await mount();
    expect(el.state).to.equal('waiting');
    expect(world().proxy.starts).to.have.length(0);
    const socket = FakeSocket.last;
    socket.accept();
    expect(socket.sent).to.deep.equal([{ type: 'subscribe', sessionId: SESSION.sessionId }]);
    expect((part(el, 'link') as HTMLAnchorElement).href).to.equal(SESSION.consumerUrl);
    const success = once(el, 'obv-success');
    socket.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } });
    await success;
    // Kept, marked linked: a reload shows the account again (see link-flow.test.ts).
    expect(JSON.parse(sessionStorage.getItem(pendingKey('linkRef', new URL('/obv', location.href)))!)).to.deep.include({
      sessionId: SESSION.sessionId,
      done: true,
    });
  });

  it('lets the element of the reloaded page pick up the session its predecessor started', async () => {
    const before = await mount();
    await startWaiting(before);
    // A reload tears the page down without a cancel; the new page's element starts from its attributes.
    before.remove();
    const after = await mount();
    expect(after.state).to.equal('waiting');
    expect(world().proxy.starts).to.have.length(1);
    const socket = FakeSocket.last;
    socket.accept();
    expect(socket.sent).to.deep.equal([{ type: 'subscribe', sessionId: SESSION.sessionId }]);
    const success = once<typeof ACCOUNT>(after, 'obv-success');
    socket.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } });
    // Without the proxy's words, the shown and spoken lines are the bare label.
    expect((await success).detail).to.deep.equal({
      ...ACCOUNT,
      displayLabel: ACCOUNT.accountLabel,
      spokenLabel: ACCOUNT.accountLabel,
    });
  });

  it('remembers the started session under the element name and proxy', async () => {
    const el = await mount('name=bankToken');
    await startWaiting(el);
    const stored = sessionStorage.getItem(pendingKey('bankToken', new URL('/obv', location.href)));
    expect(stored).to.equal(remembered());
  });

  for (const [what, purchase] of [
    ['another link session', 'link …order-t2'],
    ['a page without a link token', ''],
  ] as const) {
    it(`does not resume a session started for ${what}`, async () => {
      sessionStorage.setItem(pendingKey('linkRef', new URL('/obv', location.href)), remembered(purchase));
      const el = await mount();
      expect(el.state).to.equal('idle');
      expect(FakeSocket.instances).to.have.length(0);
    });
  }
});
