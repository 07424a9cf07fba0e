// The element's flow for a returning shopper, with a scripted proxy: the saved accounts listed first with
// the first one used at once (form value and obv-success), another choice replacing it, "Use another
// account" starting the bank flow (or, when saving is allowed, first the consent box) and Cancel coming
// back to the list, a failed choice showing an error
// with Cancel back to the list, removal with a confirmation (the last one gone: the bank button), the
// consent box's version sent only when ticked, and Reconnect.
import { expect, fixture, html } from '@open-wc/testing';
import '../../widget/obv-link-account.ts';
import type { ObvLinkAccountElement } from '../../widget/obv-link-account-element.ts';
import sinon from 'sinon';
import { tick, until, useWorld } from './helpers.ts';

const LINK_TOKEN = `lt_${'Ab3_-x9Z'.repeat(4)}`;
const WORDS = { lang: 'en', title: 'Pay with a saved account', useAnother: 'Use another account', remove: 'Remove', removeConfirm: 'Remove this account?', keep: 'Keep', reconnect: 'Reconnect', reconnectHint: 'Sign in again.' };
const SAVING = { version: 'v-7', lang: 'en', checkbox: 'Save this account', text: 'You authorize…' };
const offered = (id: string, last4: string) => ({ id, fiName: 'Sandbox Federal Bank', accountLabel: `Checking ••••${last4}`, fiAccountType: 'CHECKING', displayLabel: `Checking ••••${last4}`, spokenLabel: `Checking ending in ${last4}` });
const ACCOUNTS = [offered('id-one-0000000000000', '4321'), offered('id-two-0000000000000', '9876')];

const q = <T extends Element = HTMLElement>(el: ObvLinkAccountElement, selector: string) => el.shadowRoot!.querySelector<T>(selector);
/** What the scripted proxy answers. */
type Reply = { status: number; body?: unknown };
const radios = (el: ObvLinkAccountElement) => [...el.shadowRoot!.querySelectorAll<HTMLInputElement>('input[type=radio]')];

describe('<obv-link-account> for a returning shopper', () => {
  const world = useWorld();

  function scripted(offer: object, use: (id: string) => Reply | Promise<Reply> = (id) => ({ status: 201, body: { status: 'success', linkRef: `ref-${id}`, ...offered(id, id.includes('one') ? '4321' : '9876') } })) {
    const { proxy } = world();
    proxy.routes['POST /obv/saved-accounts/offer'] = () => ({ status: 200, body: offer });
    proxy.routes['POST /obv/saved-accounts/use'] = async (request) => use(((await request.json()) as { savedAccountId: string }).savedAccountId);
    proxy.routes['POST /obv/saved-accounts/remove'] = () => ({ status: 204 });
  }
  const mount = () => fixture<ObvLinkAccountElement>(html`<obv-link-account proxy-url="/obv" link-token=${LINK_TOKEN} name="linkRef"></obv-link-account>`);

  it('lists the saved accounts, uses the first at once (form value, obv-success), and another choice replaces it', async () => {
    scripted({ accounts: ACCOUNTS, words: WORDS });
    const successes: string[] = [];
    const heard = (event: CustomEvent<{ linkRef: string }>) => successes.push(event.detail.linkRef);
    document.addEventListener('obv-success', heard);
    try {
      const el = await mount();
      await until(() => el.value === `ref-${ACCOUNTS[0]!.id}`, 'the first account to be ready');
      expect(el.state).to.equal('saved');
      expect(radios(el).map((r) => r.checked)).to.deep.equal([true, false]);
      expect(el.account?.accountLabel).to.equal('Checking ••••4321');
      radios(el)[1]!.click();
      await until(() => el.value === `ref-${ACCOUNTS[1]!.id}`, 'the second account to be ready');
      expect(successes).to.deep.equal([`ref-${ACCOUNTS[0]!.id}`, `ref-${ACCOUNTS[1]!.id}`]);
      expect(world().proxy.requests.filter((r) => r.url.endsWith('/verifications'))).to.have.length(0);
    } finally {
      document.removeEventListener('obv-success', heard);
    }
  });

  it('"Use another account" starts the bank flow; Cancel comes back to the list with the chosen account', async () => {
    scripted({ accounts: ACCOUNTS, words: WORDS });
    const el = await mount();
    await until(() => el.value !== '', 'a chosen account');
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'waiting', 'the bank flow');
    expect(el.value).to.equal('');
    el.cancel();
    await until(() => el.state === 'saved', 'back to the list');
    expect(el.value).to.equal(`ref-${ACCOUNTS[0]!.id}`);
  });

  it('with saving allowed, the list shows no consent box; "Use another account" shows it beside the bank button, and the list is one step back', async () => {
    scripted({ accounts: ACCOUNTS, words: WORDS, saving: SAVING });
    const el = await mount();
    await until(() => el.value === `ref-${ACCOUNTS[0]!.id}`, 'the first account to be ready');
    // Beside the list, "Save this account" would read as the chosen saved account's.
    expect(q(el, '#consent')).to.equal(null);
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'idle', 'the bank step\'s screen');
    expect(el.value, 'no account is chosen while another one is about to be linked').to.equal('');
    expect(world().proxy.starts).to.have.length(0);
    expect(q<HTMLInputElement>(el, '#consent')!.checked).to.equal(false);
    const back = q(el, '[part~="secondary-button"]')!;
    expect(back.textContent).to.equal(WORDS.title);
    back.click();
    await until(() => el.state === 'saved', 'back to the list');
    expect(el.value).to.equal(`ref-${ACCOUNTS[0]!.id}`);
    expect(radios(el).map((r) => r.checked)).to.deep.equal([true, false]);
    // Again, this time ticking the box: the start carries the consent words' version.
    q(el, '[part~="button"]')!.click();
    await until(() => !!q(el, '#consent'), 'the consent box');
    q<HTMLInputElement>(el, '#consent')!.click();
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'waiting', 'the bank flow');
    expect(world().proxy.starts.map((start) => start.body)).to.deep.equal([{ linkToken: LINK_TOKEN, consent: SAVING.version }]);
  });

  it('an answer about the list does not undo "Use another account"', async () => {
    let answer: (reply: Reply) => void = () => undefined;
    scripted({ accounts: ACCOUNTS, words: WORDS, saving: SAVING }, () => new Promise<Reply>((resolve) => (answer = resolve)));
    const el = await mount();
    await until(() => el.state === 'saved' && world().proxy.requests.some((r) => r.url.endsWith('/use')), 'the first account on its way');
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'idle', 'the bank step\'s screen');
    answer({ status: 201, body: { status: 'success', linkRef: `ref-${ACCOUNTS[0]!.id}`, ...offered(ACCOUNTS[0]!.id, '4321') } });
    await tick(30);
    expect(el.state).to.equal('idle');
    expect(q(el, '#consent')).to.not.equal(null);
  });

  it('a failed choice shows an error; Cancel brings the list back, and a click on the chosen account tries again', async () => {
    let failing = true;
    scripted({ accounts: ACCOUNTS, words: WORDS }, (id) => (failing ? { status: 503, body: { title: 'Unavailable', status: 503 } } : { status: 201, body: { status: 'success', linkRef: `ref-${id}`, ...offered(id, '4321') } }));
    const el = await mount();
    await until(() => el.state === 'error', 'the error');
    el.cancel();
    await until(() => el.state === 'saved', 'back to the list');
    expect(el.value).to.equal('');
    failing = false;
    radios(el)[0]!.click();
    await until(() => el.value === `ref-${ACCOUNTS[0]!.id}`, 'the account chosen again by a click on it');
    expect(world().proxy.requests.filter((r) => r.url.endsWith('/verifications'))).to.have.length(0);
  });

  it('Remove asks first (the browser\'s confirmation); confirmed, the account leaves the list, and without accounts the bank button is back', async () => {
    scripted({ accounts: [ACCOUNTS[0]], words: WORDS });
    const el = await mount();
    await until(() => el.value !== '', 'a chosen account');
    const confirm = sinon.stub(window, 'confirm').returns(false);
    q(el, '.row button')!.click();
    expect(confirm.calledOnceWith('Remove this account?')).to.equal(true);
    await tick(20);
    expect(world().proxy.requests.some((r) => r.url.endsWith('/remove'))).to.equal(false);
    confirm.returns(true);
    q(el, '.row button')!.click();
    await until(() => el.state === 'idle', 'the bank button');
    expect(world().proxy.bodies.at(-1)).to.deep.equal({ linkToken: LINK_TOKEN, savedAccountId: ACCOUNTS[0]!.id });
    expect(el.value).to.equal('');
  });

  it('sends the consent words\' version with the start only when the box is ticked', async () => {
    scripted({ accounts: [], words: WORDS, saving: SAVING });
    const el = await mount();
    await until(() => !!q(el, '#consent'), 'the consent box');
    expect(q<HTMLInputElement>(el, '#consent')!.checked).to.equal(false);
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'waiting', 'the bank flow');
    expect(world().proxy.bodies.at(-1)).to.deep.equal({ linkToken: LINK_TOKEN });
    el.cancel();
    await until(() => el.state === 'idle', 'idle');
    q<HTMLInputElement>(el, '#consent')!.click();
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'waiting', 'the bank flow again');
    expect(world().proxy.bodies.at(-1)).to.deep.equal({ linkToken: LINK_TOKEN, consent: 'v-7' });
  });

  for (const [what, outcome, label] of [
    ['a cancel at the bank', { status: 'failure', code: 'CONSUMER_CANCELLED', message: 'Cancelled.', text: 'You cancelled.', lang: 'en' }, 'Link your bank account'],
    ['a failure', { status: 'failure', code: 'USER_ERROR', message: 'Bad.', text: 'No luck.', lang: 'en' }, 'Try again'],
    ['a locked account', { status: 'failure', code: 'ACCOUNT_LOCKED', message: 'Locked.', text: 'Locked.', lang: 'en' }, 'Link another account'],
  ] as const) {
    it(`keeps the consent after ${what}: the box stays ticked beside "${label}", which starts with it (and without it once unticked)`, async () => {
      scripted({ accounts: [], words: WORDS, saving: SAVING });
      const el = await mount();
      await until(() => !!q(el, '#consent'), 'the consent box');
      q<HTMLInputElement>(el, '#consent')!.click();
      q(el, '[part~="button"]')!.click();
      await until(() => el.state === 'waiting', 'the bank flow');
      const { FakeSocket } = await import('./helpers.ts');
      FakeSocket.last.accept();
      FakeSocket.last.receive({ type: 'result', sessionId: 's-123', outcome });
      await until(() => el.state === 'failure', 'the failure');
      expect(q<HTMLInputElement>(el, '#consent')!.checked, 'still ticked').to.equal(true);
      await expect(el).to.be.accessible();
      expect(q(el, '[part~="button"]')!.textContent).to.equal(label);
      q(el, '[part~="button"]')!.click();
      await until(() => el.state === 'waiting', 'the bank flow again');
      expect(world().proxy.starts.map((start) => start.body)).to.deep.equal([{ linkToken: LINK_TOKEN, consent: 'v-7' }, { linkToken: LINK_TOKEN, consent: 'v-7' }]);
      // The shopper can still change it: unticked on the next failure screen, the next start has no consent.
      FakeSocket.last.accept();
      FakeSocket.last.receive({ type: 'result', sessionId: 's-123', outcome });
      await until(() => el.state === 'failure', 'the failure again');
      q<HTMLInputElement>(el, '#consent')!.click();
      q(el, '[part~="button"]')!.click();
      await until(() => world().proxy.starts.length === 3 && el.state === 'waiting', 'the third start');
      expect(world().proxy.starts.at(-1)!.body).to.deep.equal({ linkToken: LINK_TOKEN });
    });
  }

  it('keeps the consent through "Try again" after a network error and through "Change"', async () => {
    scripted({ accounts: [], words: WORDS, saving: SAVING });
    const el = await mount();
    await until(() => !!q(el, '#consent'), 'the consent box');
    q<HTMLInputElement>(el, '#consent')!.click();
    world().proxy.routes['POST /obv/verifications'] = () => new TypeError('Failed to fetch');
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'error', 'the network error');
    expect(q<HTMLInputElement>(el, '#consent')!.checked).to.equal(true);
    world().proxy.routes['POST /obv/verifications'] = () => ({ status: 201, body: { sessionId: 's-123', consumerUrl: 'https://bank.example/c', expiresAt: new Date(Date.now() + 60_000).toISOString() } });
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'waiting', 'the bank flow');
    const { FakeSocket } = await import('./helpers.ts');
    FakeSocket.last.accept();
    FakeSocket.last.receive({ type: 'result', sessionId: 's-123', outcome: { status: 'success', linkRef: 'ref-1', ...offered('a', '4321') } });
    await until(() => el.state === 'success', 'linked');
    q(el, '[part~="button"]')!.click(); // Change
    await until(() => el.state === 'waiting', 'the bank flow for the change');
    expect(world().proxy.starts.map((start) => start.body).slice(-2)).to.deep.equal([{ linkToken: LINK_TOKEN, consent: 'v-7' }, { linkToken: LINK_TOKEN, consent: 'v-7' }]);
  });

  it('after a payment refused as stale, brings "Reconnect" into view and focuses it, saying nothing was charged (the proxy\'s words)', async () => {
    const hint = 'Nothing was charged: sign in again.';
    scripted({ accounts: [], words: { ...WORDS, reconnectHint: hint }, reconnect: { ...offered('x'.repeat(22), '4321'), displayLabel: 'Reconnect Sandbox Federal Bank ••••4321', spokenLabel: 'Reconnect Sandbox Federal Bank, Checking ending in 4321' } });
    const spacer = document.createElement('div');
    spacer.style.height = '3000px';
    document.body.prepend(spacer);
    try {
      const el = await mount();
      await until(() => el.matches(':focus-within'), 'focus on the element');
      expect(el.shadowRoot!.activeElement!.textContent).to.equal('Reconnect');
      expect(q(el, '[part~="status"]')!.textContent).to.contain(hint);
      const box = el.getBoundingClientRect();
      expect(box.top >= 0 && box.bottom <= innerHeight, 'in view').to.equal(true);
    } finally {
      spacer.remove();
    }
  });

  it('says the proxy\'s "Reconnect …" title, spoken in words, with a Reconnect button', async () => {
    scripted({ accounts: [], words: WORDS, reconnect: { ...offered('x'.repeat(22), '4321'), displayLabel: 'Reconnect Sandbox Federal Bank ••••4321', spokenLabel: 'Reconnect Sandbox Federal Bank, Checking ending in 4321' } });
    const el = await mount();
    await until(() => (q(el, '.title')?.textContent ?? '').includes('Reconnect'), 'the reconnect title');
    expect(q(el, '.title [aria-hidden]')!.textContent).to.equal('Reconnect Sandbox Federal Bank ••••4321');
    expect(q(el, '.title .sr')!.textContent).to.equal('Reconnect Sandbox Federal Bank, Checking ending in 4321');
    expect(q(el, '[part~="button"]')!.textContent).to.equal('Reconnect');
  });

  it('without an offer (the proxy cannot say) the element offers the bank as before', async () => {
    const el = await mount();
    await until(() => world().proxy.requests.length > 0, 'the offer request');
    expect(el.state).to.equal('idle');
    expect(q(el, '[part~="button"]')!.textContent).to.contain('Link your bank account');
  });
});
