// The element's flow for a returning shopper, with a scripted proxy: the saved accounts listed first with
// the first one used at once (form value and obv-success), another choice replacing it, "Use another
// account" starting the bank flow (or, when saving is allowed, first the consent box) and Cancel coming
// back to the list, a failed choice showing an error
// with Cancel back to the list, removal confirmed in the element (the account named, Keep focused, the
// removal announced, focus back on the list; the last one gone: the bank button), the consent box's
// version sent only when ticked, and Reconnect (the other saved accounts and "Use another account" beside
// it, "Reconnect" again after a cancel at the bank), and the success's note.
import { expect, fixture, html } from '@open-wc/testing';
import { resetMouse, sendMouse } from '@web/test-runner-commands';
import sinon from 'sinon';
import '../../widget/obv-link-account.ts';
import type { ObvLinkAccountElement } from '../../widget/obv-link-account-element.ts';
import { timing } from '../../widget/settings.ts';
import { FakeSocket, SESSION, drawn, tick, until, useWorld } from './helpers.ts';

const LINK_TOKEN = `lt_${'Ab3_-x9Z'.repeat(4)}`;
const WORDS = {
  lang: 'en',
  title: 'Pay with a saved account',
  useAnother: 'Use another account',
  useSaved: 'Use a saved account',
  remove: 'Remove',
  removeConfirm: 'Remove {account}?',
  removed: '{account} was removed.',
  keep: 'Keep',
  reconnect: 'Reconnect',
  reconnectHint: 'Sign in again.',
  offline: 'You are offline: this account is used once you are back.',
  busy: 'Too many changes at once: wait a moment.',
  down: 'That did not work just now.',
};
const SAVING = { version: 'v-7', lang: 'en', checkbox: 'Save this account', text: 'You authorize…' };
/** With the words of the box's details (proxy/accounts/consent.ts), for the axe checks. */
const SAVING_DETAILED = { ...SAVING, more: 'What you authorize', details: 'You can remove it.' };
const offered = (id: string, last4: string) => ({
  id,
  fiName: 'Sandbox Federal Bank',
  accountLabel: `Checking ••••${last4}`,
  fiAccountType: 'CHECKING',
  displayLabel: `Checking ••••${last4}`,
  spokenLabel: `Checking ending in ${last4}`,
});
const ACCOUNTS = [offered('id-one-0000000000000', '4321'), offered('id-two-0000000000000', '9876')];

const q = <T extends Element = HTMLElement>(el: ObvLinkAccountElement, selector: string) =>
  el.shadowRoot!.querySelector<T>(selector);
/** What the scripted proxy answers. */
type Reply = { status: number; body?: unknown } | Error;
const radios = (el: ObvLinkAccountElement) => [
  ...el.shadowRoot!.querySelectorAll<HTMLInputElement>('input[type=radio]'),
];
/**
 * The reference the scripted proxy made for the chosen account, once it is ready: the element holds it
 * back (`value` and `account.linkRef` empty) until the choice is confirmed, so it is read off the list.
 */
const readyRef = (el: ObvLinkAccountElement, accounts: { id: string }[] = ACCOUNTS) => {
  const chosen = accounts[radios(el).findIndex((radio) => radio.checked)];
  return el.account && chosen ? `ref-${chosen.id}` : '';
};

describe('<obv-link-account> for a returning shopper', () => {
  const world = useWorld();

  function scripted(
    offer: object,
    use: (id: string) => Reply | Promise<Reply> = (id) => ({
      status: 201,
      body: { status: 'success', linkRef: `ref-${id}`, ...offered(id, id.includes('one') ? '4321' : '9876') },
    }),
  ) {
    const { proxy } = world();
    proxy.routes['POST /obv/saved-accounts/offer'] = () => ({ status: 200, body: offer });
    proxy.routes['POST /obv/saved-accounts/use'] = async (request) =>
      use(((await request.json()) as { savedAccountId: string }).savedAccountId);
    proxy.routes['POST /obv/saved-accounts/remove'] = () => ({ status: 204 });
  }
  /** Holds the scripted offer's answer until the returned function is called. */
  function holdOffer(): () => void {
    const { proxy } = world();
    const offer = proxy.routes['POST /obv/saved-accounts/offer']!;
    let release = () => undefined as void;
    const held = new Promise<void>((resolve) => (release = resolve));
    proxy.routes['POST /obv/saved-accounts/offer'] = async (request) => {
      await held;
      return offer(request);
    };
    return () => release();
  }
  const mount = () =>
    fixture<ObvLinkAccountElement>(
      html`<obv-link-account proxy-url="/obv" link-token=${LINK_TOKEN} name="linkRef"></obv-link-account>`,
    );

  it('lists the saved accounts, uses the first at once (account, obv-success; no reference before it is confirmed), and another choice replaces it', async () => {
    scripted({ accounts: ACCOUNTS, words: WORDS });
    const successes: string[] = [];
    const heard = (event: CustomEvent<{ linkRef: string; accountLabel: string }>) =>
      successes.push(`${event.detail.accountLabel}:${event.detail.linkRef}`);
    document.addEventListener('obv-success', heard);
    try {
      const el = await mount();
      await until(() => readyRef(el) === `ref-${ACCOUNTS[0]!.id}`, 'the first account to be ready');
      expect(el.state).to.equal('saved');
      expect(radios(el).map((r) => r.checked)).to.deep.equal([true, false]);
      expect(el.account).to.deep.equal({
        linkRef: '',
        accountLabel: 'Checking ••••4321',
        fiName: 'Sandbox Federal Bank',
        fiAccountType: 'CHECKING',
      });
      expect(el.value, 'no form value before the choice is confirmed').to.equal('');
      radios(el)[1]!.click();
      await until(() => readyRef(el) === `ref-${ACCOUNTS[1]!.id}`, 'the second account to be ready');
      expect(successes).to.deep.equal(['Checking ••••4321:', 'Checking ••••9876:']);
      expect(world().proxy.requests.filter((r) => r.url.endsWith('/verifications'))).to.have.length(0);
    } finally {
      document.removeEventListener('obv-success', heard);
    }
  });

  it('"Use another account" starts the bank flow; Cancel comes back to the list with the chosen account', async () => {
    scripted({ accounts: ACCOUNTS, words: WORDS });
    const el = await mount();
    await until(() => el.account !== undefined, 'a chosen account');
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'waiting', 'the bank flow');
    expect(el.account).to.equal(undefined);
    el.cancel();
    await until(() => el.state === 'saved', 'back to the list');
    expect(readyRef(el)).to.equal(`ref-${ACCOUNTS[0]!.id}`);
  });

  it('with saving allowed, the list shows no consent box; "Use another account" shows it beside the bank button, and the list is one step back', async () => {
    scripted({ accounts: ACCOUNTS, words: WORDS, saving: SAVING });
    const el = await mount();
    await until(() => readyRef(el) === `ref-${ACCOUNTS[0]!.id}`, 'the first account to be ready');
    // Beside the list, "Save this account" would read as the chosen saved account's.
    expect(q(el, '#consent')).to.equal(null);
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'idle', "the bank step's screen");
    expect(el.account, 'no account is chosen while another one is about to be linked').to.equal(undefined);
    expect(world().proxy.starts).to.have.length(0);
    expect(q<HTMLInputElement>(el, '#consent')!.checked).to.equal(false);
    const back = q(el, '[part~="secondary-button"]')!;
    expect(back.textContent).to.equal(WORDS.useSaved);
    back.click();
    await until(() => el.state === 'saved', 'back to the list');
    expect(readyRef(el)).to.equal(`ref-${ACCOUNTS[0]!.id}`);
    expect(radios(el).map((r) => r.checked)).to.deep.equal([true, false]);
    // Again, this time ticking the box: the start carries the consent words' version.
    q(el, '[part~="button"]')!.click();
    await until(() => !!q(el, '#consent'), 'the consent box');
    q<HTMLInputElement>(el, '#consent')!.click();
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'waiting', 'the bank flow');
    expect(world().proxy.starts.map((start) => start.body)).to.deep.equal([
      { linkToken: LINK_TOKEN, consent: SAVING.version },
    ]);
  });

  it('an answer about the list does not undo "Use another account"', async () => {
    let answer: (reply: Reply) => void = () => undefined;
    scripted(
      { accounts: ACCOUNTS, words: WORDS, saving: SAVING },
      () => new Promise<Reply>((resolve) => (answer = resolve)),
    );
    const el = await mount();
    await until(
      () => el.state === 'saved' && world().proxy.requests.some((r) => r.url.endsWith('/use')),
      'the first account on its way',
    );
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'idle', "the bank step's screen");
    answer({
      status: 201,
      body: { status: 'success', linkRef: `ref-${ACCOUNTS[0]!.id}`, ...offered(ACCOUNTS[0]!.id, '4321') },
    });
    await tick(30);
    expect(el.state).to.equal('idle');
    expect(q(el, '#consent')).to.not.equal(null);
  });

  const problemText = (el: ObvLinkAccountElement) => q(el, '[part~="error"]')?.textContent ?? '';
  const mainButtons = (el: ObvLinkAccountElement) =>
    [...el.shadowRoot!.querySelectorAll<HTMLButtonElement>('.actions > [part~="button"]')].map((b) => b.textContent);

  it('a choice made offline keeps the list, the account chosen, says so, and is used by itself once the browser is back online', async () => {
    let online = false;
    sinon.stub(Navigator.prototype, 'onLine').get(() => online);
    scripted({ accounts: ACCOUNTS, words: WORDS }, (id) =>
      online
        ? { status: 201, body: { status: 'success', linkRef: `ref-${id}`, ...offered(id, '9876') } }
        : new TypeError('Failed to fetch'),
    );
    const el = await mount();
    await until(() => el.state === 'saved' && problemText(el) !== '', 'the first choice failed offline');
    radios(el)[1]!.click();
    await el.updateComplete;
    expect(problemText(el), 'a new choice clears the last problem').to.equal('');
    await until(
      () => world().proxy.requests.filter((r) => r.url.endsWith('/use')).length === 2 && problemText(el) !== '',
      'the second choice failed offline',
    );
    expect(el.state, 'the list stays').to.equal('saved');
    expect(radios(el).map((r) => r.checked)).to.deep.equal([false, true]);
    expect(problemText(el)).to.equal(WORDS.offline);
    expect(q(el, '#s')!.textContent, 'said in the live region').to.contain(WORDS.offline);
    expect(el.account).to.equal(undefined);
    expect(mainButtons(el)).to.deep.equal(['Try again', 'Use another account']);
    await expect(el).to.be.accessible();
    online = true;
    window.dispatchEvent(new Event('online'));
    await until(() => readyRef(el) === `ref-${ACCOUNTS[1]!.id}`, 'the same choice used once back online');
    expect(problemText(el)).to.equal('');
    expect(world().proxy.starts, 'never a bank step instead').to.have.length(0);
  });

  it('a choice refused by the rate limit (429) says so and keeps the list; "Try again" uses the same account', async () => {
    let limited = true;
    scripted({ accounts: ACCOUNTS, words: WORDS }, (id) =>
      limited
        ? { status: 429, body: { title: 'Too Many Requests', status: 429 } }
        : { status: 201, body: { status: 'success', linkRef: `ref-${id}`, ...offered(id, '4321') } },
    );
    const el = await mount();
    await until(() => problemText(el) !== '', 'the refused choice');
    expect(problemText(el)).to.equal(WORDS.busy);
    expect(el.state).to.equal('saved');
    limited = false;
    [...el.shadowRoot!.querySelectorAll<HTMLButtonElement>('.actions > button')]
      .find((b) => b.textContent === 'Try again')!
      .click();
    await until(() => readyRef(el) === `ref-${ACCOUNTS[0]!.id}`, 'the account used');
    expect(world().proxy.starts).to.have.length(0);
  });

  it('a choice the proxy could not make (5xx) says so and keeps the list; a click on the chosen account tries again', async () => {
    let failing = true;
    scripted({ accounts: ACCOUNTS, words: WORDS }, (id) =>
      failing
        ? { status: 503, body: { title: 'Unavailable', status: 503 } }
        : { status: 201, body: { status: 'success', linkRef: `ref-${id}`, ...offered(id, '4321') } },
    );
    const el = await mount();
    await until(() => problemText(el) !== '', 'the failed choice');
    expect(problemText(el)).to.equal(WORDS.down);
    expect(el.state).to.equal('saved');
    failing = false;
    radios(el)[0]!.click();
    await until(() => readyRef(el) === `ref-${ACCOUNTS[0]!.id}`, 'the account chosen again by a click on it');
    expect(world().proxy.requests.filter((r) => r.url.endsWith('/verifications'))).to.have.length(0);
  });

  it('fires change when a new choice withdraws the account chosen before, and again when the new one is ready', async () => {
    let answer: () => void = () => undefined;
    scripted({ accounts: ACCOUNTS, words: WORDS }, (id) =>
      id === ACCOUNTS[0]!.id
        ? { status: 201, body: { status: 'success', linkRef: `ref-${id}`, ...offered(id, '4321') } }
        : new Promise<Reply>(
            (resolve) =>
              (answer = () =>
                resolve({ status: 201, body: { status: 'success', linkRef: `ref-${id}`, ...offered(id, '9876') } })),
          ),
    );
    const el = await mount();
    await until(() => readyRef(el) === `ref-${ACCOUNTS[0]!.id}`, 'the first account ready');
    const values: string[] = [];
    el.addEventListener('change', () => values.push(readyRef(el)));
    radios(el)[1]!.click();
    await until(() => values.length === 1, 'the change');
    expect(values, 'no account to pay with while the new one is on its way').to.deep.equal(['']);
    await until(
      () => world().proxy.requests.filter((r) => r.url.endsWith('/use')).length === 2,
      'the second choice sent',
    );
    await tick(10);
    answer();
    await until(() => values.length === 2, 'the second change');
    expect(values).to.deep.equal(['', `ref-${ACCOUNTS[1]!.id}`]);
  });

  it('arrowing through the list sends one choice at a time: the latest once the one on its way is answered', async () => {
    const three = [...ACCOUNTS, offered('id-three-00000000000', '5555')];
    const waiting: (() => void)[] = [];
    const answer = async () => {
      await until(() => waiting.length > 0, 'a choice waiting for its answer');
      waiting.shift()!();
    };
    scripted(
      { accounts: three, words: WORDS },
      (id) =>
        new Promise<Reply>((resolve) =>
          waiting.push(() =>
            resolve({ status: 201, body: { status: 'success', linkRef: `ref-${id}`, ...offered(id, '4321') } }),
          ),
        ),
    );
    const el = await mount();
    const uses = () =>
      world().proxy.bodies.filter((_, i) => world().proxy.requests[i]!.url.endsWith('/use')) as {
        savedAccountId: string;
      }[];
    await until(() => uses().length === 1, 'the first choice on its way');
    radios(el)[1]!.click();
    radios(el)[2]!.click();
    radios(el)[1]!.click();
    await tick(20);
    expect(uses()).to.have.length(1);
    await answer();
    await until(() => uses().length === 2, 'the latest choice sent');
    expect(uses().map((body) => body.savedAccountId)).to.deep.equal([three[0]!.id, three[1]!.id]);
    await answer();
    await until(() => readyRef(el, three) === `ref-${three[1]!.id}`, 'the latest choice ready');
  });

  it('Remove asks in the element, naming the account; Keep keeps it; confirmed, the removal is announced and focus goes to the list, never to the next Remove', async () => {
    scripted({ accounts: ACCOUNTS, words: WORDS });
    const el = await mount();
    await until(() => el.account !== undefined, 'a chosen account');
    const shadow = el.shadowRoot!;
    const removeOf = (row: number) =>
      shadow.querySelectorAll<HTMLButtonElement>('.row')[row]!.querySelector<HTMLButtonElement>(':scope > button');
    expect(removeOf(0)!.getAttribute('aria-label')).to.equal('Remove Sandbox Federal Bank Checking ending in 4321');
    removeOf(0)!.focus();
    removeOf(0)!.click();
    await until(() => !!q(el, '.ask'), 'the question');
    const ask = q(el, '.ask')!;
    expect(ask.getAttribute('role')).to.equal('group');
    expect(q(el, '#q')!.textContent!.replace(/\s+/g, ' ')).to.equal(
      'Remove Sandbox Federal Bank Checking ••••4321Checking ending in 4321?',
    );
    expect(q(el, '#q .sr')!.textContent).to.equal('Checking ending in 4321');
    await until(() => shadow.activeElement?.id === 'k', 'focus on Keep');
    // Keep: nothing is removed, the question goes.
    q(el, '#k')!.click();
    await until(() => !q(el, '.ask'), 'the question gone');
    expect(world().proxy.requests.some((r) => r.url.endsWith('/remove'))).to.equal(false);
    // Again, confirmed.
    removeOf(0)!.click();
    await until(() => !!q(el, '.ask'), 'the question again');
    q(el, '.ask button')!.click();
    await until(() => shadow.querySelectorAll('.row').length === 1, 'the account removed');
    const { requests, bodies } = world().proxy;
    expect(bodies[requests.findIndex((r) => r.url.endsWith('/remove'))]).to.deep.equal({
      linkToken: LINK_TOKEN,
      savedAccountId: ACCOUNTS[0]!.id,
    });
    // Said in the status (a live region), and shown.
    await until(() => (q(el, '#s')!.textContent ?? '').includes('was removed'), 'the announcement');
    expect(q(el, '#s')!.getAttribute('aria-live')).to.equal('polite');
    expect(q(el, '#s p:not(.title) .sr')!.textContent).to.equal('Checking ending in 4321');
    // Focus on the list: the account now chosen, not its Remove.
    await until(() => shadow.activeElement === radios(el)[0], 'focus on the remaining account');
    await until(() => readyRef(el, [ACCOUNTS[1]!]) === `ref-${ACCOUNTS[1]!.id}`, 'the remaining account chosen');
    // The last one gone: the bank button.
    removeOf(0)!.click();
    await until(() => !!q(el, '.ask'), 'the question');
    q(el, '.ask button')!.click();
    await until(() => el.state === 'idle', 'the bank button');
    expect(el.account).to.equal(undefined);
  });

  it("Escape closes Remove's question as Keep does (nothing removed, focus back on the list); Remove is lighter than its account, the confirming Remove destructive", async () => {
    scripted({ accounts: ACCOUNTS, words: WORDS });
    const el = await mount();
    await until(() => el.account !== undefined, 'a chosen account');
    const shadow = el.shadowRoot!;
    const remove = q<HTMLButtonElement>(el, '.row > button')!;
    expect(
      Number(getComputedStyle(remove).fontWeight),
      "Remove is not as heavy as the account's bank name",
    ).to.be.below(Number(getComputedStyle(q(el, '.row .fi')!).fontWeight));
    expect(getComputedStyle(remove).borderTopColor).to.equal('rgba(0, 0, 0, 0)');
    remove.focus();
    remove.click();
    await until(() => shadow.activeElement?.id === 'k', 'focus on Keep');
    const confirm = q<HTMLButtonElement>(el, '.ask button')!;
    expect(getComputedStyle(confirm).backgroundColor, 'the confirming Remove in the danger colour').to.equal(
      'rgb(180, 35, 24)',
    );
    await expect(el).to.be.accessible();
    let outside = 0;
    const count = () => outside++;
    document.addEventListener('keydown', count);
    try {
      q(el, '#k')!.dispatchEvent(new KeyboardEvent('keydown', { key: 'Escape', bubbles: true, composed: true }));
      await until(() => !q(el, '.ask'), 'the question gone');
    } finally {
      document.removeEventListener('keydown', count);
    }
    expect(outside, 'handled by the element: a dialog around it stays open').to.equal(0);
    expect(world().proxy.requests.some((r) => r.url.endsWith('/remove'))).to.equal(false);
    await until(() => shadow.activeElement === radios(el)[0], 'focus on the chosen account');
  });

  it('shades only the button or link under the pointer: a hovered row does not dim its Remove', async () => {
    scripted({ accounts: ACCOUNTS, words: WORDS });
    const el = await mount();
    await until(() => el.account !== undefined, 'a chosen account');
    const label = q(el, '.row label')!.getBoundingClientRect();
    await sendMouse({
      type: 'move',
      position: [Math.round(label.left + 10), Math.round(label.top + label.height / 2)],
    });
    try {
      expect(getComputedStyle(q(el, '.row')!).filter).to.equal('none');
      expect(getComputedStyle(q(el, '.list')!).filter).to.equal('none');
      const remove = q(el, '.row > button')!.getBoundingClientRect();
      await sendMouse({
        type: 'move',
        position: [Math.round(remove.left + remove.width / 2), Math.round(remove.top + remove.height / 2)],
      });
      expect(getComputedStyle(q(el, '.row > button')!).filter).to.equal('brightness(0.94)');
    } finally {
      await resetMouse();
    }
  });

  it("the page's strings replace the question's and the announcement's words", async () => {
    scripted({ accounts: ACCOUNTS, words: WORDS });
    const el = await mount();
    el.strings = { removeConfirm: 'Forget {account} for good?', removed: 'Forgot {account}.' };
    await until(() => el.account !== undefined, 'a chosen account');
    q(el, '.row > button')!.click();
    await until(() => !!q(el, '#q'), 'the question');
    expect(q(el, '#q')!.textContent).to.match(/^Forget Sandbox Federal Bank .* for good\?$/);
    q(el, '.ask button')!.click();
    await until(() => (q(el, '#s')!.textContent ?? '').includes('Forgot'), "the announcement in the page's words");
  });

  it("sends the consent words' version with the start only when the box is ticked", async () => {
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
    [
      'a failure',
      { status: 'failure', code: 'USER_ERROR', message: 'Bad.', text: 'No luck.', lang: 'en' },
      'Try again',
    ],
    [
      'a locked account',
      { status: 'failure', code: 'ACCOUNT_LOCKED', message: 'Locked.', text: 'Locked.', lang: 'en' },
      'Link another account',
    ],
  ] as const) {
    it(`shows no consent box beside ${what} (it would read as the failed account's); "${label}" starts with the consent given`, async () => {
      scripted({ accounts: [], words: WORDS, saving: SAVING_DETAILED });
      const el = await mount();
      await until(() => !!q(el, '#consent'), 'the consent box');
      q<HTMLInputElement>(el, '#consent')!.click();
      q(el, '[part~="button"]')!.click();
      await until(() => el.state === 'waiting', 'the bank flow');
      FakeSocket.last.accept();
      FakeSocket.last.receive({ type: 'result', sessionId: 's-123', outcome });
      await until(() => el.state === 'failure', 'the failure');
      expect(q(el, '#consent'), 'no box on the failure screen').to.equal(null);
      expect(q(el, '[part~="consent"]')).to.equal(null);
      await expect(el).to.be.accessible();
      expect(q(el, '[part~="button"]')!.textContent).to.equal(label);
      q(el, '[part~="button"]')!.click();
      await until(() => el.state === 'waiting', 'the bank flow again');
      expect(world().proxy.starts.map((start) => start.body)).to.deep.equal([
        { linkToken: LINK_TOKEN, consent: 'v-7' },
        { linkToken: LINK_TOKEN, consent: 'v-7' },
      ]);
    });
  }

  it('a cancel at the bank comes back to the consent box as the shopper left it', async () => {
    scripted({ accounts: [], words: WORDS, saving: SAVING_DETAILED });
    const el = await mount();
    await until(() => !!q(el, '#consent'), 'the consent box');
    q<HTMLInputElement>(el, '#consent')!.click();
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'waiting', 'the bank flow');
    FakeSocket.last.accept();
    FakeSocket.last.receive({
      type: 'result',
      sessionId: 's-123',
      outcome: {
        status: 'failure',
        code: 'CONSUMER_CANCELLED',
        message: 'Cancelled.',
        text: 'You cancelled.',
        lang: 'en',
      },
    });
    await until(() => el.state === 'idle', 'the first screen');
    expect(q<HTMLInputElement>(el, '#consent')!.checked, 'still ticked, beside the button it governs').to.equal(true);
    // Unticked now, the next start has no consent.
    q<HTMLInputElement>(el, '#consent')!.click();
    q(el, '[part~="button"]')!.click();
    await until(() => world().proxy.starts.length === 2 && el.state === 'waiting', 'the second start');
    expect(world().proxy.starts.at(-1)!.body).to.deep.equal({ linkToken: LINK_TOKEN });
  });

  it('after a failed "Change" shows no consent box: Keep brings the account back as it was linked, its note with it', async () => {
    scripted({ accounts: [], words: WORDS, saving: SAVING_DETAILED });
    const el = await mount();
    await until(() => !!q(el, '#consent'), 'the consent box');
    q<HTMLInputElement>(el, '#consent')!.click();
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'waiting', 'the bank flow');
    const note = 'This account will be saved for your next purchases.';
    FakeSocket.last.accept();
    FakeSocket.last.receive({
      type: 'result',
      sessionId: 's-123',
      outcome: { status: 'success', linkRef: 'ref-1', ...offered('a', '4321'), note },
    });
    await until(() => el.state === 'success', 'linked');
    q(el, '[part~="button"]')!.click(); // Change
    await until(() => el.state === 'waiting', 'the bank flow for the change');
    FakeSocket.last.accept();
    FakeSocket.last.receive({
      type: 'result',
      sessionId: 's-123',
      outcome: { status: 'failure', code: 'ACCOUNT_LOCKED', message: 'Locked.', text: 'Locked.', lang: 'en' },
    });
    await until(() => el.state === 'failure', 'the failed change');
    expect(q(el, '#consent'), 'nothing beside Keep that Keep would not honour').to.equal(null);
    q(el, '[part~="secondary-button"]')!.click(); // Keep Checking ••••4321
    await until(() => el.state === 'success', 'the account back');
    expect(el.value).to.equal('ref-1');
    expect(q(el, '#s')!.textContent).to.contain(note);
  });

  it('keeps the consent through "Try again" after a network error and through "Change"', async () => {
    scripted({ accounts: [], words: WORDS, saving: SAVING_DETAILED });
    const el = await mount();
    await until(() => !!q(el, '#consent'), 'the consent box');
    q<HTMLInputElement>(el, '#consent')!.click();
    world().proxy.routes['POST /obv/verifications'] = () => new TypeError('Failed to fetch');
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'error', 'the network error');
    expect(q(el, '#consent')).to.equal(null);
    world().proxy.routes['POST /obv/verifications'] = () => ({
      status: 201,
      body: {
        ...SESSION,
        consumerUrl: 'https://bank.example/c',
        expiresAt: new Date(Date.now() + 60_000).toISOString(),
      },
    });
    q(el, '[part~="button"]')!.click();
    await until(() => el.state === 'waiting', 'the bank flow');
    const { FakeSocket } = await import('./helpers.ts');
    FakeSocket.last.accept();
    FakeSocket.last.receive({
      type: 'result',
      sessionId: 's-123',
      outcome: { status: 'success', linkRef: 'ref-1', ...offered('a', '4321') },
    });
    await until(() => el.state === 'success', 'linked');
    q(el, '[part~="button"]')!.click(); // Change
    await until(() => el.state === 'waiting', 'the bank flow for the change');
    expect(
      world()
        .proxy.starts.map((start) => start.body)
        .slice(-2),
    ).to.deep.equal([
      { linkToken: LINK_TOKEN, consent: 'v-7' },
      { linkToken: LINK_TOKEN, consent: 'v-7' },
    ]);
  });

  it('after a payment refused as stale, brings "Reconnect" into view and focuses it, saying nothing was charged (the proxy\'s words)', async () => {
    const hint = 'Nothing was charged: sign in again.';
    scripted({
      accounts: [],
      words: { ...WORDS, reconnectHint: hint },
      reconnect: {
        ...offered('x'.repeat(22), '4321'),
        displayLabel: 'Reconnect Sandbox Federal Bank ••••4321',
        spokenLabel: 'Reconnect Sandbox Federal Bank, Checking ending in 4321',
      },
    });
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
    scripted({
      accounts: [],
      words: WORDS,
      reconnect: {
        ...offered('x'.repeat(22), '4321'),
        displayLabel: 'Reconnect Sandbox Federal Bank ••••4321',
        spokenLabel: 'Reconnect Sandbox Federal Bank, Checking ending in 4321',
      },
    });
    const el = await mount();
    await until(() => (q(el, '.title')?.textContent ?? '').includes('Reconnect'), 'the reconnect title');
    expect(q(el, '.title [aria-hidden]')!.textContent).to.equal('Reconnect Sandbox Federal Bank ••••4321');
    expect(q(el, '.title .sr')!.textContent).to.equal('Reconnect Sandbox Federal Bank, Checking ending in 4321');
    expect(q(el, '[part~="button"]')!.textContent).to.equal('Reconnect');
  });

  const RECONNECT = {
    ...offered('x'.repeat(22), '8765'),
    displayLabel: 'Reconnect Sandbox Federal Bank ••••8765',
    spokenLabel: 'Reconnect Sandbox Federal Bank, Checking ending in 8765',
  };
  const buttons = (el: ObvLinkAccountElement) =>
    [...el.shadowRoot!.querySelectorAll<HTMLButtonElement>('.actions button')].map((b) => b.textContent);
  /** The bank's answer to the start waited on. */
  async function bankAnswers(el: ObvLinkAccountElement, outcome: object) {
    await until(() => el.state === 'waiting' && FakeSocket.instances.length > 0, 'the bank step');
    const socket = FakeSocket.last;
    socket.accept();
    socket.receive({ type: 'subscribed', sessionId: SESSION.sessionId, state: 'pending' });
    socket.receive({ type: 'result', sessionId: SESSION.sessionId, outcome });
  }
  const cancelledAtBank = {
    status: 'failure',
    code: 'CONSUMER_CANCELLED',
    message: 'Cancelled.',
    text: 'You cancelled at your bank.',
    lang: 'en',
  };

  it('the reconnect screen is no dead end: the other saved accounts and "Use another account" beside Reconnect', async () => {
    scripted({ accounts: [ACCOUNTS[1]], words: WORDS, saving: SAVING, reconnect: RECONNECT });
    const el = await mount();
    await until(
      () => (q(el, '.title')?.textContent ?? '').includes('Reconnect'),
      'the reconnect screen first, not the list',
    );
    expect(el.account, 'no saved account chosen behind the reconnect screen').to.equal(undefined);
    expect(buttons(el)).to.deep.equal(['Reconnect', 'Use a saved account', 'Use another account']);
    // The other saved accounts: the list, its account chosen at once.
    [...el.shadowRoot!.querySelectorAll<HTMLButtonElement>('.actions button')][1]!.click();
    await until(
      () => el.state === 'saved' && readyRef(el, [ACCOUNTS[1]!]) === `ref-${ACCOUNTS[1]!.id}`,
      'the list, its account chosen',
    );
    // From the list, "Use another account": a plain link, "another" sent so the stale token is not.
    q(el, '.actions > [part~="button"]')!.click();
    await until(() => el.state === 'idle' && !!q(el, '#consent'), "the bank step's screen");
    expect(q(el, '.title')!.textContent).to.not.contain('Reconnect');
    q(el, '[part~="button"]')!.click();
    await until(
      () => world().proxy.starts.length === 1 && world().proxy.bodies.length === world().proxy.requests.length,
      'the start',
    );
    expect(world().proxy.starts[0]!.body).to.deep.equal({ linkToken: LINK_TOKEN, another: true });
  });

  for (const [language, hint] of [
    ['en', 'Bank linking cancelled.'],
    ['es', 'Vinculación bancaria cancelada.'],
  ] as const) {
    it(`after Reconnect and a cancel at the bank, comes back to the reconnect screen: the account's name, Reconnect, "Use another account" (${language})`, async () => {
      scripted({ accounts: [], words: WORDS, reconnect: RECONNECT });
      const el = await fixture<ObvLinkAccountElement>(
        html`<obv-link-account proxy-url="/obv" link-token=${LINK_TOKEN} language=${language}></obv-link-account>`,
      );
      await until(() => buttons(el)[0] === 'Reconnect', 'the reconnect screen');
      expect(buttons(el)).to.deep.equal(['Reconnect', 'Use another account']);
      expect(q(el, '#consent'), 'no consent box beside Reconnect: the account is saved already').to.equal(null);
      q(el, '[part~="button"]')!.click();
      await bankAnswers(el, cancelledAtBank);
      await until(() => el.state === 'idle', 'back on the reconnect screen');
      expect(buttons(el)).to.deep.equal(['Reconnect', 'Use another account']);
      expect(q(el, '.title [aria-hidden]')!.textContent).to.equal(RECONNECT.displayLabel);
      expect(q(el, '#s')!.textContent).to.contain(hint);
      await expect(el).to.be.accessible();
      q(el, '[part~="button"]')!.click();
      await until(
        () => world().proxy.starts.length === 2 && world().proxy.bodies.length === world().proxy.requests.length,
        'the second start',
      );
      expect(world().proxy.starts.map((start) => start.body)).to.deep.equal([
        { linkToken: LINK_TOKEN },
        { linkToken: LINK_TOKEN },
      ]);
    });
  }

  it('after "Use another account" from the reconnect screen, links another account (the stale token not sent), its retry too', async () => {
    scripted({ accounts: [], words: WORDS, reconnect: RECONNECT });
    const el = await mount();
    await until(() => buttons(el)[0] === 'Reconnect', 'the reconnect screen');
    [...el.shadowRoot!.querySelectorAll<HTMLButtonElement>('.actions button')]
      .find((b) => b.textContent === 'Use another account')!
      .click();
    await until(() => buttons(el)[0]!.includes('Link your bank account'), 'the bank button');
    expect(buttons(el)[1], 'back to the reconnect screen').to.equal('Reconnect');
    q(el, '[part~="button"]')!.click();
    await bankAnswers(el, { status: 'failure', code: 'USER_ERROR', message: 'Bad.', text: 'No luck.', lang: 'en' });
    await until(() => el.state === 'failure', 'the failure');
    q(el, '[part~="button"]')!.click();
    await until(
      () => world().proxy.starts.length === 2 && world().proxy.bodies.length === world().proxy.requests.length,
      'the second start',
    );
    expect(world().proxy.starts.map((start) => start.body)).to.deep.equal([
      { linkToken: LINK_TOKEN, another: true },
      { linkToken: LINK_TOKEN, another: true },
    ]);
  });

  it("a success shows the proxy's note under the account (a different account than the one to reconnect), in the live region", async () => {
    scripted({ accounts: [], words: WORDS, reconnect: RECONNECT });
    const el = await mount();
    await until(() => buttons(el)[0] === 'Reconnect', 'the reconnect screen');
    q(el, '[part~="button"]')!.click();
    const note =
      'This isn’t the account you were reconnecting: it will be used for this purchase only, and the other one still needs reconnecting.';
    await bankAnswers(el, { status: 'success', linkRef: 'ref_1', ...offered('y', '4321'), note });
    await until(() => el.state === 'success', 'the success');
    expect(
      [...q(el, '#s')!.querySelectorAll('p')].map((p) => p.textContent!.replace(/\s+/g, ' ').trim()).at(-1),
    ).to.equal(note);
  });

  it('draws nothing until it knows what to offer, then the list first (never the first-time screen before it)', async () => {
    const { proxy } = world();
    scripted({ accounts: ACCOUNTS, words: WORDS, saving: SAVING });
    const answer = holdOffer();
    const drawnStates: string[] = [];
    const watcher = new MutationObserver((records) =>
      drawnStates.push(...records.map((record) => (record.target as Element).getAttribute('state')!)),
    );
    try {
      const el = await mount();
      watcher.observe(el, { attributeFilter: ['state'] });
      await until(() => proxy.requests.length > 0, 'the offer request');
      await tick(50);
      // Held: no screen, no state attribute (what pages reserve the element's height by), nothing to focus.
      expect(el.hasAttribute('state')).to.equal(false);
      expect(el.shadowRoot!.querySelector('[part]')).to.equal(null);
      answer();
      await drawn(el);
      await until(() => el.account !== undefined, 'the first account to be ready');
      expect(drawnStates[0]).to.equal('saved');
      expect(drawnStates).not.to.include('idle');
    } finally {
      watcher.disconnect();
    }
  });

  it('with a proxy slow to offer, draws the first-time screen after timing.offerWaitMs; the list still comes with the offer', async () => {
    timing.offerWaitMs = 100;
    const { proxy } = world();
    scripted({ accounts: ACCOUNTS, words: WORDS });
    const answer = holdOffer();
    const el = await mount();
    await until(() => proxy.requests.length > 0, 'the offer request');
    const asked = Date.now();
    await drawn(el);
    expect(Date.now() - asked).to.be.at.least(80);
    expect(el.state).to.equal('idle');
    expect(q(el, '[part~="button"]')!.textContent).to.contain('Link your bank account');
    answer();
    await until(() => el.state === 'saved' && el.account !== undefined, 'the list once the offer came');
  });

  it('without an offer (the proxy cannot say) the element offers the bank as before', async () => {
    const el = await drawn(await mount());
    expect(world().proxy.requests.map((r) => new URL(r.url).pathname)).to.deep.equal(['/obv/saved-accounts/offer']);
    expect(el.state).to.equal('idle');
    expect(q(el, '[part~="button"]')!.textContent).to.contain('Link your bank account');
  });

  describe("chosen is not confirmed: the form's submit confirms it", () => {
    /** The element in a form with two submit buttons; the page's own submit listener records what it sees. */
    async function inForm(confirm: () => Reply | Promise<Reply> = () => ({ status: 204 })) {
      scripted({ accounts: ACCOUNTS, words: WORDS });
      world().proxy.routes['POST /obv/saved-accounts/confirm'] = () => confirm();
      const form = await fixture<HTMLFormElement>(
        html`<form action="/pay" method="post">
          <obv-link-account proxy-url="/obv" link-token=${LINK_TOKEN} name="linkRef" required></obv-link-account>
          <button name="action" value="other">Other</button>
          <button name="action" value="pay">Pay</button>
        </form>`,
      );
      const el = form.querySelector<ObvLinkAccountElement>('obv-link-account')!;
      const submits: { submitter: string; linkRef: string; action: string; at: number }[] = [];
      form.addEventListener('submit', (event) => {
        // The page submits in JavaScript (no navigation in a test): what it would send.
        event.preventDefault();
        const data = new FormData(form, event.submitter);
        submits.push({
          submitter: event.submitter?.textContent ?? '',
          linkRef: String(data.get('linkRef') ?? ''),
          action: String(data.get('action') ?? ''),
          at: performance.now(),
        });
      });
      await until(() => el.account !== undefined, 'the first account ready');
      const pay = form.querySelectorAll('button')[1]!;
      const confirms = () => world().proxy.requests.filter((r) => r.url.endsWith('/saved-accounts/confirm'));
      return { form, el, submits, pay, confirms };
    }

    it('holds the submit, confirms the choice, sets the form value and submits again with the same button (one click, one submit)', async () => {
      const { form, el, submits, pay, confirms } = await inForm();
      expect(el.value).to.equal('');
      expect(form.checkValidity(), 'a chosen account counts for `required`').to.equal(true);
      let change = 0;
      el.addEventListener('change', () => change++);
      const clicked = performance.now();
      pay.click();
      pay.click();
      await until(() => submits.length > 0, 'the submit the page sees');
      await tick(20);
      expect(confirms(), 'one confirmation').to.have.length(1);
      const confirmBody = world().proxy.bodies[world().proxy.requests.indexOf(confirms()[0]!)];
      expect(confirmBody).to.deep.equal({ linkRef: `ref-${ACCOUNTS[0]!.id}` });
      expect(submits, 'the held submit is not seen; the confirmed one once').to.have.length(1);
      expect(submits[0]).to.include({ submitter: 'Pay', action: 'pay', linkRef: `ref-${ACCOUNTS[0]!.id}` });
      expect(el.value).to.equal(`ref-${ACCOUNTS[0]!.id}`);
      expect(el.account?.linkRef).to.equal(`ref-${ACCOUNTS[0]!.id}`);
      expect(change, 'change for the value').to.equal(1);
      // What the shopper waits for between the click and the page's submit, the proxy's answer aside (a stub here).
      console.log(`confirm at submit: ${(submits[0]!.at - clicked).toFixed(1)} ms from the click to the page's submit`);
      // Confirmed: the next submit goes straight through, with no new confirmation.
      pay.click();
      await until(() => submits.length === 2, 'a second submit');
      expect(confirms()).to.have.length(1);
    });

    it('a failed confirmation stops the submit and says why in the live region; the next submit confirms and goes', async () => {
      let reply: Reply = { status: 503, body: { title: 'Unavailable', status: 503 } };
      const { el, submits, pay, confirms } = await inForm(() => reply);
      pay.click();
      await until(() => problemText(el) !== '', 'the words of the failure');
      expect(problemText(el)).to.equal(WORDS.down);
      expect(q(el, '#s')!.textContent, 'said in the live region').to.contain(WORDS.down);
      await tick(20);
      expect(submits, 'the page saw no submit').to.have.length(0);
      expect(el.value).to.equal('');
      expect(el.state).to.equal('saved');
      reply = { status: 429, body: { title: 'Too Many Requests', status: 429 } };
      pay.click();
      await until(() => confirms().length === 2 && problemText(el) === WORDS.busy, 'the rate limit said');
      expect(submits).to.have.length(0);
      reply = { status: 204 };
      pay.click();
      await until(() => submits.length === 1, 'the submit once confirmed');
      expect(submits[0]).to.include({ submitter: 'Pay', linkRef: `ref-${ACCOUNTS[0]!.id}` });
      expect(problemText(el)).to.equal('');
    });

    it('confirm() in JavaScript: the account with its linkRef once released, once; none when the proxy refused', async () => {
      let reply: Reply = new TypeError('Failed to fetch');
      const { el, submits, confirms } = await inForm(() => reply);
      expect(await el.confirm(), 'out of reach').to.equal(undefined);
      expect(problemText(el)).to.equal(WORDS.down);
      reply = { status: 204 };
      const account = await el.confirm();
      expect(account).to.deep.equal({
        linkRef: `ref-${ACCOUNTS[0]!.id}`,
        accountLabel: 'Checking ••••4321',
        fiName: 'Sandbox Federal Bank',
        fiAccountType: 'CHECKING',
      });
      expect(el.value, 'the form value set').to.equal(account!.linkRef);
      expect(await el.confirm()).to.deep.equal(account);
      expect(confirms(), 'asked once more after the failure, never again').to.have.length(2);
      expect(submits, 'confirm() submits nothing').to.have.length(0);
      // Another choice is a new one to confirm.
      radios(el)[1]!.click();
      await until(() => readyRef(el) === `ref-${ACCOUNTS[1]!.id}`, 'the second account ready');
      expect(el.account?.linkRef).to.equal('');
      expect((await el.confirm())?.linkRef).to.equal(`ref-${ACCOUNTS[1]!.id}`);
    });
  });
});
