// The flow without the element: each status it goes through, the events it fires on its host, in order.
// The proxy, the socket and the tab are the test doubles of helpers.ts.
import { expect } from '@open-wc/testing';
import sinon from 'sinon';
import { createLinkFlow, type FlowStatus, type FlowTarget, type LinkFlow } from '../../widget/link-flow.ts';
import { pendingKey, savePending } from '../../widget/pending-session.ts';
import { timing } from '../../widget/settings.ts';
import { ACCOUNT, FakeSocket, SESSION, useWorld, until } from './helpers.ts';

const BASE = new URL('/obv', location.href);
const STORAGE_KEY = pendingKey('linkRef', BASE);

/** A flow on a bare EventTarget, with what it reported: every status and every event, in order. */
function makeFlow(target: Partial<FlowTarget> = {}) {
  const host = new EventTarget();
  const log: string[] = [];
  const statuses: FlowStatus[] = [];
  for (const name of ['obv-start', 'obv-open', 'obv-success', 'obv-failure', 'obv-cancel', 'obv-error']) {
    host.addEventListener(name, (event) => log.push(`${name} ${JSON.stringify((event as CustomEvent).detail)}`));
  }
  const flow = createLinkFlow(
    host,
    () => ({
      base: BASE,
      storageKey: STORAGE_KEY,
      purchase: 'link …AAAAAAAA',
      language: 'en',
      tabOpener: () => window,
      request: { linkToken: 'lt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
      ...target,
    }),
    (status, previous) => {
      statuses.push(status);
      log.push(`${previous.kind} → ${status.kind}`);
    },
  );
  return { flow, log, statuses, kinds: () => statuses.map((status) => status.kind) };
}

/** Starts, and waits until the flow waits on an accepted socket. */
async function waiting(flow: LinkFlow): Promise<FakeSocket> {
  flow.start();
  await until(() => flow.status.kind === 'waiting' && FakeSocket.instances.length > 0, 'the flow to wait on a socket');
  FakeSocket.last.accept();
  return FakeSocket.last;
}

const success = {
  type: 'result',
  sessionId: SESSION.sessionId,
  outcome: { status: 'success', ...ACCOUNT, displayLabel: 'Checking ••••4321', spokenLabel: 'Checking ending in 4321' },
};
const failure = {
  type: 'result',
  sessionId: SESSION.sessionId,
  outcome: { status: 'failure', code: 'LOCKED', message: 'Locked.', text: 'Cuenta bloqueada.', lang: 'es' },
};

describe('the link flow (createLinkFlow)', () => {
  const world = useWorld();

  it('starts idle', () => {
    expect(makeFlow().flow.status).to.deep.equal({ kind: 'idle', cancelled: false });
  });

  it('goes idle → starting → waiting → success, each status before its event', async () => {
    const { flow, log } = makeFlow();
    const socket = await waiting(flow);
    expect(flow.status).to.deep.equal({ kind: 'waiting', session: SESSION, tab: true, blocked: false, closed: false });
    socket.receive(success);
    expect(flow.status).to.deep.equal({
      kind: 'success',
      account: ACCOUNT,
      label: ['Checking ••••4321', 'Checking ending in 4321'],
      note: '',
    });
    expect(log.map((line) => line.replace(/"idempotencyKey":"[^"]+"/, '"idempotencyKey":"…"'))).to.deep.equal([
      'idle → starting',
      'obv-start {"idempotencyKey":"…"}',
      'starting → waiting',
      `obv-open {"sessionId":"${SESSION.sessionId}","consumerUrl":"${SESSION.consumerUrl}"}`,
      'waiting → success',
      `obv-success ${JSON.stringify({ ...ACCOUNT, displayLabel: 'Checking ••••4321', spokenLabel: 'Checking ending in 4321' })}`,
    ]);
    expect(world().tab.location.href).to.equal(SESSION.consumerUrl);
    expect(world().proxy.bodies[0]).to.deep.equal({ linkToken: 'lt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
  });

  it('goes to failure with the shopper’s words and their language', async () => {
    const { flow, log } = makeFlow();
    (await waiting(flow)).receive(failure);
    expect(flow.status).to.deep.equal({ kind: 'failure', message: 'Cuenta bloqueada.', lang: 'es', code: 'LOCKED' });
    expect(log.at(-1)).to.equal('obv-failure {"code":"LOCKED","message":"Locked."}');
  });

  it('goes to expired when the proxy says the session expired', async () => {
    const { flow, log } = makeFlow();
    (await waiting(flow)).receive({ type: 'expired', sessionId: SESSION.sessionId });
    expect(flow.status).to.deep.equal({ kind: 'expired' });
    expect(log.at(-1)).to.equal('obv-error {"kind":"expired","message":"Session expired"}');
  });

  it('waits with no tab and blocked when the browser blocks the tab, until the consumer opens the link', async () => {
    world().open.returns(null);
    const { flow, log, kinds } = makeFlow();
    await waiting(flow);
    expect(kinds()).to.deep.equal(['starting', 'waiting']);
    expect(flow.status).to.deep.equal({ kind: 'waiting', session: SESSION, tab: false, blocked: true, closed: false });
    expect(log).to.include('obv-error {"kind":"popup-blocked","message":"New tab blocked"}');
    flow.linkOpened();
    expect(flow.status).to.deep.equal({ kind: 'waiting', session: SESSION, tab: false, blocked: false, closed: false });
    expect(log.at(-1)).to.equal(`obv-open {"sessionId":"${SESSION.sessionId}","consumerUrl":"${SESSION.consumerUrl}"}`);
  });

  it('says the bank tab was closed and offers the link, once the proxy confirms the session still waits', async () => {
    world().proxy.routes['POST /obv/sessions/lookup'] = () => ({
      status: 200,
      body: { sessionId: SESSION.sessionId, state: 'pending', expiresAt: SESSION.expiresAt },
    });
    const { flow } = makeFlow();
    await waiting(flow);
    world().tab.closed = true;
    flow.showTab();
    await until(() => flow.status.kind === 'waiting' && flow.status.closed, 'the closed tab');
    expect(flow.status).to.deep.equal({ kind: 'waiting', session: SESSION, tab: false, blocked: false, closed: true });
    flow.linkOpened();
    expect(flow.status).to.deep.equal({ kind: 'waiting', session: SESSION, tab: false, blocked: false, closed: false });
  });

  it('says so, and leaves no blank tab, when the bank tab closed a moment ago without saying so yet', async () => {
    world().proxy.routes['POST /obv/sessions/lookup'] = () => ({
      status: 200,
      body: { sessionId: SESSION.sessionId, state: 'pending', expiresAt: SESSION.expiresAt },
    });
    const { flow } = makeFlow();
    await waiting(flow);
    // The tab still reads open, but its name now opens a new, blank tab (the named one is gone).
    const blank = { closed: false, close: sinon.spy() };
    world().open.returns(blank as unknown as Window);
    flow.showTab();
    await until(() => flow.status.kind === 'waiting' && flow.status.closed, 'the closed tab');
    expect(blank.close.calledOnce).to.equal(true);
    expect(flow.status).to.deep.equal({ kind: 'waiting', session: SESSION, tab: false, blocked: false, closed: true });
  });

  it('does not call a tab closed by the return page a closed tab: the session came back from the bank', async () => {
    world().proxy.routes['POST /obv/sessions/lookup'] = () => ({
      status: 200,
      body: { sessionId: SESSION.sessionId, state: 'returned', expiresAt: SESSION.expiresAt },
    });
    const { flow, statuses } = makeFlow();
    await waiting(flow);
    world().tab.closed = true;
    flow.showTab();
    await until(() => world().proxy.requests.some((request) => request.url.endsWith('/sessions/lookup')), 'the lookup');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(statuses.some((status) => status.kind === 'waiting' && status.closed)).to.equal(false);
  });

  it('goes to a configuration error on a proxy 4xx (actions stay) and a service error on a 5xx', async () => {
    world().proxy.routes['POST /obv/verifications'] = () => ({
      status: 422,
      body: { title: 'Unprocessable', detail: 'consumer.email is required' },
    });
    const refused = makeFlow();
    refused.flow.start();
    await until(() => refused.flow.status.kind === 'error', 'the error');
    expect(refused.flow.status).to.deep.equal({
      kind: 'error',
      error: { kind: 'configuration', message: 'consumer.email is required' },
    });
    expect(world().tab.close.calledOnce).to.equal(true);

    world().proxy.routes['POST /obv/verifications'] = () => ({ status: 503, body: { title: 'Unavailable' } });
    const down = makeFlow();
    down.flow.start();
    await until(() => down.flow.status.kind === 'error', 'the error');
    expect(down.flow.status).to.deep.equal({
      kind: 'error',
      error: { kind: 'network', message: 'Unavailable', service: true },
    });
  });

  it('retries a network error of the watch by asking about the same session again, without a new start; still unreachable, it says so', async () => {
    let down = true;
    world().proxy.routes['POST /obv/sessions/lookup'] = () =>
      down
        ? new TypeError('Failed to fetch')
        : { status: 200, body: { sessionId: SESSION.sessionId, state: 'pending', expiresAt: SESSION.expiresAt } };
    const { flow, kinds } = makeFlow();
    flow.start();
    // Three sockets that never open send the watch to polling; three failed polls end it.
    for (let dropped = 0; dropped < 3; dropped++) {
      await until(() => FakeSocket.instances.length > dropped, 'a socket');
      FakeSocket.last.drop();
    }
    await until(() => flow.status.kind === 'error', 'the network error');
    expect(flow.status).to.deep.include({ kind: 'error' });
    expect(flow.status.kind === 'error' && flow.status.error.kind).to.equal('network');
    expect(flow.status.kind === 'error' && !!flow.status.error.checked).to.equal(false);
    // "Check now" while the proxy is still out of reach: the same screen, now saying it was checked.
    flow.retry();
    await until(() => flow.status.kind === 'error' && !!flow.status.error.checked, 'the checked error');
    down = false;
    flow.retry();
    await until(() => flow.status.kind === 'waiting', 'waiting again');
    expect(flow.status).to.deep.equal({ kind: 'waiting', session: SESSION, tab: true, blocked: false, closed: false });
    expect(world().proxy.starts).to.have.length(1);
    expect(kinds().slice(-3)).to.deep.equal(['error', 'error', 'waiting']);
  });

  it('says a lost connection at once when the browser goes offline, never a closed tab; back online, a bank step finished meanwhile shows its account', async () => {
    let down = true;
    world().proxy.routes['POST /obv/sessions/lookup'] = () =>
      down
        ? new TypeError('Failed to fetch')
        : {
            status: 200,
            body: {
              sessionId: SESSION.sessionId,
              state: 'succeeded',
              expiresAt: SESSION.expiresAt,
              outcome: success.outcome,
            },
          };
    const { flow, statuses } = makeFlow();
    flow.hostConnected();
    await waiting(flow);
    window.dispatchEvent(new Event('offline'));
    expect(flow.status.kind === 'error' && flow.status.error).to.deep.include({ kind: 'network', watch: true });
    // The bank tab closed itself after the bank step; the checkout is visible again, still offline.
    world().tab.closed = true;
    document.dispatchEvent(new Event('visibilitychange'));
    await until(() => world().proxy.requests.some((request) => request.url.endsWith('/sessions/lookup')), 'a lookup');
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(flow.status.kind).to.equal('error');
    down = false;
    window.dispatchEvent(new Event('online'));
    await until(() => flow.status.kind === 'success', 'the account');
    expect(statuses.some((status) => status.kind === 'waiting' && status.closed)).to.equal(false);
    flow.hostDisconnected();
  });

  it('notices a bank tab closed while the checkout stays visible (a window of its own)', async () => {
    world().proxy.routes['POST /obv/sessions/lookup'] = () => ({
      status: 200,
      body: { sessionId: SESSION.sessionId, state: 'pending', expiresAt: SESSION.expiresAt },
    });
    const { flow } = makeFlow();
    flow.hostConnected();
    await waiting(flow);
    world().tab.closed = true;
    // No visibility change, no click: the flow looks at the tab by itself.
    await until(() => flow.status.kind === 'waiting' && flow.status.closed, 'the closed tab', 3000);
    flow.hostDisconnected();
  });

  it('says the tab was closed, not blocked, when the shopper closed it while it said "Connecting to your bank…"', async () => {
    let answer: (reply: { status: number; body: unknown }) => void = () => undefined;
    const { flow, log } = makeFlow();
    let asked = false;
    world().proxy.routes['POST /obv/verifications'] = () =>
      new Promise((resolve) => {
        asked = true;
        answer = resolve;
      });
    flow.start();
    await until(() => asked, 'the start');
    world().tab.closed = true;
    answer({ status: 201, body: SESSION });
    await until(() => flow.status.kind === 'waiting', 'waiting');
    expect(flow.status).to.deep.equal({ kind: 'waiting', session: SESSION, tab: false, blocked: false, closed: true });
    expect(log.some((line) => line.includes('popup-blocked'))).to.equal(false);
  });

  it('gives up a start the proxy does not answer in time, as the service’s failure', async () => {
    Object.assign(timing, { startTimeoutMs: 50 });
    world().proxy.routes['POST /obv/verifications'] = (request) =>
      new Promise((_, reject) =>
        request.signal.addEventListener('abort', () => reject(new DOMException('Aborted', 'AbortError'))),
      );
    const { flow } = makeFlow();
    flow.start();
    await until(() => flow.status.kind === 'error', 'the time-out');
    expect(flow.status.kind === 'error' && flow.status.error).to.deep.include({ kind: 'network', service: true });
    expect(world().tab.close.calledOnce).to.equal(true);
  });

  it('follows the session again by itself once the browser is back online', async () => {
    let down = true;
    world().proxy.routes['POST /obv/sessions/lookup'] = () =>
      down
        ? new TypeError('Failed to fetch')
        : { status: 200, body: { sessionId: SESSION.sessionId, state: 'pending', expiresAt: SESSION.expiresAt } };
    const { flow, kinds } = makeFlow();
    flow.hostConnected();
    flow.start();
    for (let dropped = 0; dropped < 3; dropped++) {
      await until(() => FakeSocket.instances.length > dropped, 'a socket');
      FakeSocket.last.drop();
    }
    await until(() => flow.status.kind === 'error', 'the lost watch');
    expect(flow.status.kind === 'error' && flow.status.error.watch).to.equal(true);
    down = false;
    window.dispatchEvent(new Event('online'));
    await until(() => flow.status.kind === 'waiting', 'waiting again');
    expect(kinds().slice(-2)).to.deep.equal(['error', 'waiting']);
    flow.hostDisconnected();
  });

  it('retries anything else by starting again', async () => {
    const { flow, kinds } = makeFlow();
    (await waiting(flow)).receive(failure);
    flow.retry();
    expect(kinds().slice(-2)).to.deep.equal(['failure', 'starting']);
  });

  it('cancels while waiting: tells the proxy, closes the tab and goes idle with the cancelled notice', async () => {
    const { flow, log } = makeFlow();
    await waiting(flow);
    flow.cancel();
    expect(flow.status).to.deep.equal({ kind: 'idle', cancelled: true });
    expect(log.at(-1)).to.equal(`obv-cancel {"sessionId":"${SESSION.sessionId}"}`);
    expect(world().tab.close.calledOnce).to.equal(true);
    await until(
      () => world().proxy.requests.some((request) => request.url.endsWith('/sessions/cancel')),
      'the cancel request',
    );
  });

  it('never puts the session id in a URL: polling and Cancel send it in a JSON body', async () => {
    const { flow } = makeFlow();
    await waiting(flow);
    // Sockets that never open send the watch to polling.
    for (let dropped = 0; dropped < 3; dropped++) {
      await until(() => FakeSocket.instances.length > dropped, 'a socket');
      FakeSocket.last.drop();
    }
    await until(() => world().proxy.requests.some((request) => request.url.endsWith('/sessions/lookup')), 'a poll');
    flow.cancel();
    await until(
      () => world().proxy.requests.some((request) => request.url.endsWith('/sessions/cancel')),
      'the cancel request',
    );
    const { requests, bodies } = world().proxy;
    await until(() => bodies.length === requests.length, 'the bodies read');
    expect(
      requests.filter((request) => request.url.includes(SESSION.sessionId)).map((request) => request.url),
    ).to.deep.equal([]);
    requests.forEach((request, i) => {
      if (/\/sessions\/(lookup|cancel)$/.test(request.url))
        expect(bodies[i]).to.deep.equal({ sessionId: SESSION.sessionId });
    });
  });

  it('cancels a failed change back to the account linked before, and only then', async () => {
    const { flow } = makeFlow();
    (await waiting(flow)).receive(success);
    expect(!!flow.linkedBefore()).to.equal(false);
    (await waiting(flow)).receive(failure);
    expect(!!flow.linkedBefore()).to.equal(true);
    flow.cancel();
    expect(flow.status).to.deep.include({ kind: 'success', account: ACCOUNT });
    const before = flow.status;
    flow.cancel();
    expect(flow.status, 'nothing to cancel on the success screen').to.equal(before);
  });

  it('shows a wrong attribute as a configuration error, refuses to start, and goes back once it is fixed', async () => {
    const warn = sinon.stub(console, 'warn');
    const { flow, log, kinds } = makeFlow();
    flow.configure('currency must be USD');
    expect(flow.status).to.deep.equal({
      kind: 'error',
      error: { kind: 'configuration', message: 'currency must be USD', attribute: true },
    });
    expect(log.at(-1)).to.equal('obv-error {"kind":"configuration","message":"currency must be USD"}');
    expect(warn.calledOnceWith('obv-link:', 'currency must be USD')).to.equal(true);
    flow.configure('currency must be USD');
    flow.start();
    flow.retry();
    flow.reset();
    expect(kinds(), 'the same problem again, a start and a reset change nothing').to.deep.equal(['error']);
    expect(!!flow.linkedBefore()).to.equal(false);
    flow.configure(undefined);
    expect(flow.status).to.deep.equal({ kind: 'idle', cancelled: false });
  });

  it('stops a running flow when an attribute goes wrong', async () => {
    sinon.stub(console, 'warn');
    const { flow } = makeFlow();
    const socket = await waiting(flow);
    flow.configure('amount must be a positive decimal');
    expect(flow.status.kind).to.equal('error');
    expect(socket.readyState).to.equal(3);
    expect(world().tab.close.calledOnce).to.equal(true);
  });

  it('resets to idle and forgets the linked account', async () => {
    const { flow } = makeFlow();
    (await waiting(flow)).receive(success);
    flow.reset();
    expect(flow.status).to.deep.equal({ kind: 'idle', cancelled: false });
    expect(!!flow.linkedBefore()).to.equal(false);
  });

  it('resumes a remembered session for the same purchase only', () => {
    savePending(STORAGE_KEY, SESSION, 'another order');
    const other = makeFlow();
    other.flow.resume();
    expect(other.flow.status.kind).to.equal('idle');
    savePending(STORAGE_KEY, SESSION, 'link …AAAAAAAA');
    const same = makeFlow();
    same.flow.resume();
    expect(same.flow.status).to.deep.include({ kind: 'waiting', tab: false, blocked: false, closed: false });
    expect(same.flow.status.kind === 'waiting' && same.flow.status.session).to.deep.include(SESSION);
    expect(FakeSocket.instances).to.have.length(1);
  });

  it('remembers a started session, keeps a linked one (marked done) and forgets a failed one', async () => {
    const { flow } = makeFlow();
    const socket = await waiting(flow);
    expect(JSON.parse(sessionStorage.getItem(STORAGE_KEY)!)).to.deep.include({
      sessionId: SESSION.sessionId,
      for: 'link …AAAAAAAA',
    });
    socket.receive(success);
    expect(JSON.parse(sessionStorage.getItem(STORAGE_KEY)!)).to.deep.include({
      sessionId: SESSION.sessionId,
      for: 'link …AAAAAAAA',
      done: true,
    });
    flow.start();
    await until(() => flow.status.kind === 'waiting' && FakeSocket.instances.length > 1, 'the second session');
    FakeSocket.last.accept();
    FakeSocket.last.receive(failure);
    expect(sessionStorage.getItem(STORAGE_KEY)).to.equal(null);
  });

  it('after a reload, shows the account linked for the same link session again (read from the proxy), without a bank step', async () => {
    world().proxy.routes['POST /obv/sessions/lookup'] = () => ({
      status: 200,
      body: {
        sessionId: SESSION.sessionId,
        state: 'succeeded',
        expiresAt: SESSION.expiresAt,
        outcome: success.outcome,
      },
    });
    savePending(STORAGE_KEY, SESSION, 'link …AAAAAAAA', true);
    const { flow, log, kinds } = makeFlow();
    flow.resume();
    await until(() => flow.status.kind === 'success', 'the account');
    expect(kinds()).to.deep.equal(['success']);
    expect(log.some((line) => line.startsWith('obv-success') && line.includes(ACCOUNT.linkRef))).to.equal(true);
    expect(world().proxy.starts).to.have.length(0);
    expect(FakeSocket.instances).to.have.length(0);
  });

  it('never remembers a linked account without a link session (the next purchase in the tab would show it)', async () => {
    const { flow } = makeFlow({ purchase: '' });
    const socket = await waiting(flow);
    socket.receive(success);
    expect(sessionStorage.getItem(STORAGE_KEY)).to.equal(null);
  });

  it('stops listening when its host leaves the page and follows the session again when it is back', async () => {
    const { flow } = makeFlow();
    const socket = await waiting(flow);
    flow.hostDisconnected();
    expect(socket.readyState).to.equal(3);
    flow.hostConnected();
    expect(flow.status.kind).to.equal('waiting');
    expect(FakeSocket.instances).to.have.length(2);
  });

  it('drops a start cut off by leaving the page', () => {
    world().proxy.routes['POST /obv/verifications'] = () => new Promise(() => undefined);
    const { flow, kinds } = makeFlow();
    flow.start();
    flow.hostDisconnected();
    flow.hostConnected();
    expect(kinds()).to.deep.equal(['starting', 'idle']);
    expect(world().tab.close.calledOnce).to.equal(true);
  });

  it('does nothing without a usable proxy URL', () => {
    const host = new EventTarget();
    const changed = sinon.spy();
    const flow = createLinkFlow(host, () => undefined, changed);
    flow.start();
    flow.resume();
    expect(changed.called).to.equal(false);
    expect(world().open.called).to.equal(false);
  });
});
