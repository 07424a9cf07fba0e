// Accessibility in every state (axe), the live region that announces changes, both languages, merchant
// overrides of the texts, and configuration errors that must be visible instead of a silent no-op.
import { expect, fixture, html } from '@open-wc/testing';
import sinon from 'sinon';
import '../../widget/obv-link-account.ts';
import type { ObvLinkAccountElement } from '../../widget/obv-link-account-element.ts';
import { ACCOUNT, FakeSocket, SESSION, once, tick, useWorld, until } from './helpers.ts';

const status = (el: ObvLinkAccountElement) => el.shadowRoot!.querySelector<HTMLElement>('[part="status"]')!;
const text = (el: ObvLinkAccountElement) => status(el).textContent!.replace(/\s+/g, ' ').trim();

async function mount(attributes = {} as Record<string, string>): Promise<ObvLinkAccountElement> {
  const el = document.createElement('obv-link-account');
  for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, value);
  const host = await fixture<HTMLDivElement>(html`<div></div>`);
  host.append(el);
  await el.updateComplete;
  return el;
}

async function waiting(el: ObvLinkAccountElement): Promise<FakeSocket> {
  el.start();
  await until(() => el.state === 'waiting' && FakeSocket.instances.length > 0, 'waiting');
  await el.updateComplete;
  FakeSocket.last.accept();
  return FakeSocket.last;
}

async function settle(el: ObvLinkAccountElement, message: unknown): Promise<void> {
  const socket = await waiting(el);
  socket.receive(message);
  await el.updateComplete;
}

const success = { type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } };
/** As the proxy words them for a Spanish verification (proxy/words/outcomes.ts). */
const successEs = {
  ...success,
  outcome: {
    ...success.outcome,
    displayLabel: 'Corriente ••••4321',
    spokenLabel: 'Cuenta corriente terminada en 4321',
  },
};
const lockedEs = {
  type: 'result',
  sessionId: SESSION.sessionId,
  outcome: {
    status: 'failure',
    code: 'ACCOUNT_LOCKED',
    message: 'This account is locked. Contact your bank.',
    text: 'Esta cuenta está bloqueada en tu banco. Vincula otra cuenta o elige otra forma de pago; tu banco puede desbloquearla.',
    lang: 'es',
  },
};
const unknownEs = {
  type: 'result',
  sessionId: SESSION.sessionId,
  outcome: {
    status: 'failure',
    code: 'BANK_DOWN',
    message: 'The bank is unavailable.',
    text: 'The bank is unavailable.',
    lang: 'en',
  },
};
const failure = {
  type: 'result',
  sessionId: SESSION.sessionId,
  outcome: { status: 'failure', code: 'ACCOUNT_NOT_VERIFIED', message: 'The bank could not verify this account.' },
};

describe('<obv-link-account> accessibility', () => {
  const world = useWorld();

  it('passes axe while idle', async () => {
    await expect(await mount()).to.be.accessible();
  });

  it('passes axe while starting', async () => {
    world().proxy.routes['POST /obv/verifications'] = () => new Promise(() => undefined);
    const el = await mount();
    el.start();
    await el.updateComplete;
    expect(el.state).to.equal('starting');
    await expect(el).to.be.accessible();
  });

  it('passes axe while waiting on the bank tab', async () => {
    const el = await mount();
    await waiting(el);
    await expect(el).to.be.accessible();
  });

  it('passes axe after success, failure and expiry', async () => {
    for (const message of [success, failure, { type: 'expired', sessionId: SESSION.sessionId }]) {
      const el = await mount();
      await settle(el, message);
      expect(el.state).to.be.oneOf(['success', 'failure', 'expired']);
      await expect(el).to.be.accessible();
      el.remove();
      FakeSocket.instances = [];
    }
  });

  it('keeps the retry of a failure in the accent colour (the card turns red, not its main button)', async () => {
    const el = await mount();
    await settle(el, failure);
    const retry = el.shadowRoot!.querySelector<HTMLElement>('[part="button"]')!;
    expect(getComputedStyle(retry).backgroundColor).to.equal('rgb(37, 84, 216)');
    expect(getComputedStyle(el.shadowRoot!.querySelector('[part~="icon"]')!).color).to.equal('rgb(180, 35, 24)');
  });

  it('passes axe with a network error, a configuration error and a proxy’s refusal', async () => {
    world().proxy.routes['POST /obv/verifications'] = () => new TypeError('Failed to fetch');
    const el = await mount();
    el.start();
    await until(() => el.state === 'error', 'the network error');
    await el.updateComplete;
    await expect(el).to.be.accessible();
    const misconfigured = await mount({ currency: 'EUR' });
    await expect(misconfigured).to.be.accessible();
    world().proxy.routes['POST /obv/verifications'] = () => ({
      status: 400,
      body: { title: 'Bad Request', status: 400, detail: 'consumer.email is required' },
    });
    const refused = await mount();
    refused.start();
    await until(() => refused.state === 'error', 'the proxy’s refusal');
    await refused.updateComplete;
    expect(text(refused)).to.contain('Bank linking is not available').and.not.contain('consumer.email');
    await expect(refused).to.be.accessible();
  });

  for (const [language, title, feedback] of [
    ['en', 'Waiting for the connection', 'Check your internet connection'],
    ['es', 'Esperando la conexión', 'Revisa tu conexión a internet'],
  ] as const) {
    it(`passes axe offline (${language}): the lost connection at once, and "Check now" still offline says it could not reach the server`, async () => {
      world().proxy.routes['POST /obv/sessions/lookup'] = () => new TypeError('Failed to fetch');
      const el = await mount({ language });
      await waiting(el);
      window.dispatchEvent(new Event('offline'));
      await until(() => el.state === 'error', 'the lost connection');
      await el.updateComplete;
      expect(text(el)).to.contain(title).and.not.contain(feedback);
      await expect(el).to.be.accessible();
      const button = el.shadowRoot!.querySelector<HTMLButtonElement>('[part~="button"]')!;
      button.focus();
      button.click();
      await until(() => text(el).includes(feedback), 'the feedback');
      expect(el.state).to.equal('error');
      expect(el.shadowRoot!.activeElement, 'focus stays on Check now').to.equal(
        el.shadowRoot!.querySelector('[part~="button"]'),
      );
      await expect(el).to.be.accessible();
    });
  }

  it('passes axe on a failed change, with Cancel beside Try again', async () => {
    const el = await mount();
    await settle(el, success);
    await settle(el, failure);
    expect(el.state).to.equal('failure');
    expect(el.shadowRoot!.querySelectorAll('button')).to.have.length(2);
    await expect(el).to.be.accessible();
  });

  it('passes axe while disabled', async () => {
    await expect(await mount({ disabled: '' })).to.be.accessible();
  });

  it('announces every state change through one polite live region', async () => {
    const el = await mount();
    const region = status(el);
    expect(region.getAttribute('role')).to.equal('status');
    expect(region.getAttribute('aria-live')).to.equal('polite');
    const socket = await waiting(el);
    expect(status(el)).to.equal(region);
    expect(text(el)).to.contain('Continue at your bank');
    socket.receive(success);
    await el.updateComplete;
    expect(status(el)).to.equal(region);
    expect(text(el)).to.contain('Bank account linked').and.contain('Sandbox Federal Bank');
  });
});

describe('<obv-link-account> accessibility of the other screens', () => {
  describe('with a blocked pop-up', () => {
    useWorld({ popup: 'blocked' });

    it('passes axe with the link to the bank page', async () => {
      const el = await mount();
      await waiting(el);
      expect(el.shadowRoot!.querySelector('[part~="link"]')).not.to.equal(null);
      expect(text(el)).to.contain('Your browser blocked your bank’s page');
      await expect(el).to.be.accessible();
    });
  });

  describe('with the pop-up allowed', () => {
    useWorld();

    it('passes axe after a cancel, with the notice on the idle screen', async () => {
      const el = await mount();
      await waiting(el);
      el.cancel();
      await el.updateComplete;
      expect(text(el)).to.contain('Bank linking cancelled');
      await expect(el).to.be.accessible();
    });

    it('passes axe in Spanish while waiting and after a failure', async () => {
      const el = await mount({ language: 'es' });
      await waiting(el);
      expect(text(el)).to.contain('Continúa en tu banco');
      await expect(el).to.be.accessible();
      FakeSocket.last.receive(failure);
      await el.updateComplete;
      expect(el.state).to.equal('failure');
      await expect(el).to.be.accessible();
    });
  });
});

describe('<obv-link-account> languages', () => {
  const world = useWorld();

  it('speaks Spanish with language="es" and sends the language to the proxy', async () => {
    const el = await mount({ language: 'es' });
    expect(text(el)).to.contain('Paga desde tu cuenta bancaria');
    expect(el.shadowRoot!.querySelector('button')!.textContent).to.contain('Vincular cuenta bancaria');
    await settle(el, failure);
    expect(text(el)).to.contain('No pudimos vincular tu cuenta');
    // An account the bank cannot verify will not verify on a second try: the button says what to do instead.
    expect(el.shadowRoot!.querySelector('button')!.textContent).to.contain('Vincular otra cuenta');
    expect(world().proxy.bodies[0]).to.deep.include({ language: 'es' });
  });

  it('follows the lang of the page around it', async () => {
    const wrapper = await fixture<HTMLDivElement>(
      html`<div lang="es-MX"><obv-link-account required></obv-link-account></div>`,
    );
    const el = wrapper.querySelector('obv-link-account')!;
    await el.updateComplete;
    expect(text(el)).to.contain('Paga desde tu cuenta bancaria');
    expect(el.validationMessage).to.equal('Vincula una cuenta bancaria para continuar.');
    await settle(el, successEs);
    expect(text(el))
      .to.contain('Cuenta bancaria vinculada')
      .and.contain('Corriente ••••4321')
      .and.not.contain('Checking');
  });

  it('speaks English for languages it does not know', async () => {
    const el = await mount({ language: 'fr' });
    expect(text(el)).to.contain('Pay from your bank account');
  });

  it('lets the merchant override single texts through the strings property', async () => {
    const el = await mount();
    el.strings = { idleTitle: 'Pay by bank' };
    await el.updateComplete;
    expect(text(el)).to.contain('Pay by bank');
    expect(el.shadowRoot!.querySelector('button')!.textContent).to.contain('Link your bank account');
  });
});

describe('<obv-link-account> configuration errors', () => {
  const world = useWorld();

  const cases: Array<[string, Record<string, string>, string]> = [
    ['a proxy-url that is not http(s)', { 'proxy-url': 'javascript:alert(1)' }, 'proxy-url'],
    ['an empty proxy-url', { 'proxy-url': '' }, 'proxy-url'],
    ['a link-token that is a secret key, not a link token', { 'link-token': 'sk_live_123' }, 'link-token'],
    ['an empty link-token', { 'link-token': '' }, 'link-token'],
    ['a link-token one character short', { 'link-token': `lt_${'a'.repeat(31)}` }, 'link-token'],
  ];
  for (const [what, attributes, attribute] of cases) {
    it(`shows a configuration error and fires obv-error for ${what}`, async () => {
      const el = document.createElement('obv-link-account');
      for (const [name, value] of Object.entries(attributes)) el.setAttribute(name, value);
      const errors: Array<{ kind: string; message: string }> = [];
      el.addEventListener('obv-error', (event) => errors.push(event.detail));
      const warn = sinon.stub(console, 'warn');
      const host = await fixture<HTMLDivElement>(html`<div></div>`);
      try {
        host.append(el);
        await el.updateComplete;
      } finally {
        warn.restore();
      }
      expect(el.state).to.equal('error');
      expect(errors).to.have.length(1);
      expect(errors[0]!.kind).to.equal('configuration');
      expect(errors[0]!.message).to.contain(attribute);
      // The developer reads what is wrong in the console; the shopper gets no attribute names.
      expect(warn.calledOnce).to.equal(true);
      expect(String(warn.firstCall.args.join(' '))).to.contain(attribute);
      expect(text(el))
        .to.contain('Bank linking is not available')
        .and.contain('another way to pay')
        .and.not.contain(attribute);
      expect(el.shadowRoot!.querySelector('button')).to.equal(null);
      el.start();
      expect(world().open.called).to.equal(false);
      el.requestUpdate();
      await el.updateComplete;
      expect(errors).to.have.length(1);
    });
  }

  it('accepts link tokens as POST /link-sessions makes them', async () => {
    for (const token of [`lt_${'A'.repeat(32)}`, `lt_${'a1_-'.repeat(8)}`]) {
      const el = await mount({ 'link-token': token });
      expect(el.state, token).to.equal('idle');
    }
  });

  it('recovers when the merchant fixes the attribute', async () => {
    const el = await mount({ 'link-token': 'lt_short' });
    expect(el.state).to.equal('error');
    const change = once<{ state: string; previous: string }>(el, 'obv-state-change');
    el.setAttribute('link-token', `lt_${'B'.repeat(32)}`);
    expect((await change).detail).to.deep.equal({ state: 'idle', previous: 'error' });
    await el.updateComplete;
    expect(el.shadowRoot!.querySelector('button')!.textContent).to.contain('Link your bank account');
  });
});

describe('<obv-link-account> back from the bank tab', () => {
  useWorld();
  let hidden = false;
  beforeEach(() => {
    hidden = false;
    Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
  });
  afterEach(() => {
    delete (document as { hidden?: boolean }).hidden;
  });

  it('says the outcome again when the checkout tab becomes visible (a hidden tab’s live region is not heard)', async () => {
    const el = await mount();
    const socket = await waiting(el);
    hidden = true;
    socket.receive(success);
    await el.updateComplete;
    const region = status(el);
    const emptied: boolean[] = [];
    const observer = new MutationObserver(() => emptied.push(region.textContent!.trim() === ''));
    observer.observe(region, { childList: true, subtree: true, characterData: true });
    await tick(150);
    expect(emptied, 'nothing changes while the tab stays hidden').to.deep.equal([]);
    hidden = false;
    document.dispatchEvent(new Event('visibilitychange'));
    await until(
      () => emptied.includes(true) && text(el).includes('Bank account linked'),
      'the region to be emptied and filled again',
    );
    observer.disconnect();
    expect(text(el)).to.contain('Sandbox Federal Bank');
  });

  it('leaves the live region alone when the outcome arrives in a visible tab', async () => {
    const el = await mount();
    await settle(el, success);
    const region = status(el);
    let changes = 0;
    const observer = new MutationObserver(() => changes++);
    observer.observe(region, { childList: true, subtree: true, characterData: true });
    document.dispatchEvent(new Event('visibilitychange'));
    await tick(150);
    observer.disconnect();
    expect(changes).to.equal(0);
  });

  it('after success, moves focus to the status (which reads itself once), not to “Change”', async () => {
    const el = await mount();
    const socket = await waiting(el);
    el.shadowRoot!.querySelector<HTMLButtonElement>('[part="button"]')!.focus();
    socket.receive(success);
    await until(() => el.shadowRoot!.activeElement === status(el), 'focus on the status');
    expect(status(el).getAttribute('aria-live'), 'quiet while focused: heard once').to.equal('off');
    expect(text(el)).to.contain('Bank account linked');
    status(el).blur();
    await el.updateComplete;
    expect(status(el).getAttribute('aria-live')).to.equal('polite');
  });

  it('after a failure, moves focus to the main button, which the status does not describe (no repetition)', async () => {
    const el = await mount();
    const socket = await waiting(el);
    el.shadowRoot!.querySelector<HTMLButtonElement>('[part="button"]')!.focus();
    socket.receive(failure);
    await until(
      () =>
        el.state === 'failure' &&
        (el.shadowRoot!.activeElement as HTMLElement | null)?.getAttribute('part') === 'button',
      'focus on the main button',
    );
    expect(status(el).getAttribute('aria-live')).to.equal('polite');
    expect([...el.shadowRoot!.querySelectorAll('[aria-describedby]')]).to.deep.equal([]);
  });
});

describe('<obv-link-account> its own language', () => {
  useWorld();

  it('marks its Spanish words as Spanish on an English page', async () => {
    const wrapper = await fixture<HTMLDivElement>(
      html`<div lang="en"><obv-link-account language="es"></obv-link-account></div>`,
    );
    const el = wrapper.querySelector('obv-link-account')!;
    await el.updateComplete;
    expect(text(el)).to.contain('Paga desde tu cuenta bancaria');
    expect(el.shadowRoot!.querySelector('.title')!.closest('[lang]')?.getAttribute('lang')).to.equal('es');
    el.setAttribute('language', 'en-US');
    await el.updateComplete;
    expect(el.shadowRoot!.querySelector('.title')!.closest('[lang]')?.getAttribute('lang')).to.equal('en');
  });
});

describe('<obv-link-account> cancels and failures', () => {
  const world = useWorld();

  const cancelledAtBank = {
    type: 'result',
    sessionId: SESSION.sessionId,
    outcome: {
      status: 'failure',
      code: 'CONSUMER_CANCELLED',
      message: 'Cancelled.',
      text: 'You cancelled at your bank, so no account was linked.',
      lang: 'en',
    },
  };

  for (const [language, hint, label] of [
    ['en', 'Bank linking cancelled.', 'Link your bank account'],
    ['es', 'Vinculación bancaria cancelada.', 'Vincular cuenta bancaria'],
  ] as const) {
    it(`takes a cancel at the bank back to the first screen, as the checkout's own Cancel does: no red, no error (${language})`, async () => {
      const el = await mount({ language });
      const failed = once<{ code: string }>(el, 'obv-failure');
      await settle(el, cancelledAtBank);
      expect((await failed).detail.code, 'the page still hears how the bank step ended').to.equal('CONSUMER_CANCELLED');
      expect(el.state).to.equal('idle');
      expect(text(el)).to.contain(hint);
      expect(el.shadowRoot!.querySelector('.danger, [part~="error"]')).to.equal(null);
      expect(el.shadowRoot!.querySelector('[part="button"]')!.textContent).to.contain(label);
      await expect(el).to.be.accessible();
    });
  }

  it('takes a cancel at the bank after a linked account back to that account, without "cancelled"', async () => {
    const el = await mount();
    await settle(el, success);
    await settle(el, cancelledAtBank);
    expect(el.state).to.equal('success');
    expect(el.value).to.equal(ACCOUNT.linkRef);
    expect(text(el)).to.contain('Bank account linked').and.not.contain('cancelled');
  });

  for (const [language, title, cancel] of [
    ['en', 'Waiting for the connection', 'Cancel'],
    ['es', 'Esperando la conexión', 'Cancelar'],
  ] as const) {
    it(`offers Cancel while offline with a bank step under way; it stops waiting for it (${language})`, async () => {
      world().proxy.routes['POST /obv/sessions/lookup'] = () => new TypeError('Failed to fetch');
      const el = await mount({ language });
      await waiting(el);
      window.dispatchEvent(new Event('offline'));
      await until(() => el.state === 'error', 'the lost connection');
      await el.updateComplete;
      expect(text(el)).to.contain(title);
      const secondary = el.shadowRoot!.querySelector<HTMLButtonElement>('[part="secondary-button"]');
      expect(secondary?.textContent).to.equal(cancel);
      await expect(el).to.be.accessible();
      const cancelled = once(el, 'obv-cancel');
      secondary!.click();
      await cancelled;
      expect(el.state).to.equal('idle');
      expect(world().tab.close.called).to.equal(true);
    });
  }

  it('names the account the secondary button keeps after a failed “Change”', async () => {
    const el = await mount({ language: 'es' });
    await settle(el, successEs);
    await settle(el, lockedEs);
    const keep = el.shadowRoot!.querySelector<HTMLButtonElement>('[part="secondary-button"]')!;
    // Shown with the bullets; named, as a screen reader gets it, with the spoken line instead.
    const words = (skip: (node: Element) => boolean) =>
      [...keep.firstElementChild!.childNodes]
        .filter((node) => node.nodeType !== Node.COMMENT_NODE && !(node instanceof Element && skip(node)))
        .map((node) => node.textContent)
        .join('');
    expect(words((node) => node.classList.contains('sr'))).to.equal('Usar Corriente ••••4321');
    // Rendered with its space: "Usar Corriente", not "UsarCorriente" (each flex item would lose it).
    expect(keep.innerText.startsWith('Usar Corriente ••••4321')).to.equal(true);
    expect(words((node) => node.getAttribute('aria-hidden') === 'true')).to.equal(
      'Usar Cuenta corriente terminada en 4321',
    );
    expect(el.shadowRoot!.querySelector('[part="button"]')!.textContent).to.contain('Vincular otra cuenta');
    keep.click();
    await el.updateComplete;
    expect(el.state).to.equal('success');
  });
});

describe('<obv-link-account> Cancel after a failed Change', () => {
  useWorld();

  it('goes back to the account without also saying “cancelled”', async () => {
    const el = await mount();
    await settle(el, success);
    await settle(el, failure);
    el.cancel();
    await el.updateComplete;
    expect(el.state).to.equal('success');
    expect(text(el)).to.contain('Bank account linked').and.not.contain('cancelled');
    await expect(el).to.be.accessible();
  });
});

describe('<obv-link-account> the proxy’s words for the shopper', () => {
  useWorld();
  const part = (el: ObvLinkAccountElement, name: string) =>
    el.shadowRoot!.querySelector<HTMLElement>(`[part~="${name}"]`)!;

  it('shows the masked number as is but gives screen readers “terminada en 4321”', async () => {
    const el = await mount({ language: 'es' });
    await settle(el, successEs);
    const account = part(el, 'account');
    const shown = account.querySelector('[aria-hidden="true"]')!;
    const spoken = account.querySelector<HTMLElement>('.sr')!;
    expect(shown.textContent).to.equal('Corriente ••••4321');
    expect(spoken.textContent).to.equal('Cuenta corriente terminada en 4321');
    // Visually hidden, yet in the accessibility tree (not display:none or visibility:hidden).
    const box = spoken.getBoundingClientRect();
    expect(box.width <= 1, 'one pixel wide at most').to.equal(true);
    expect(getComputedStyle(spoken).display).not.to.equal('none');
    expect(getComputedStyle(spoken).visibility).to.equal('visible');
    await expect(el).to.be.accessible();
  });

  it('shows and says the bare label when the proxy sent no words of its own', async () => {
    const el = await mount();
    await settle(el, success);
    expect(part(el, 'account').querySelector('[aria-hidden="true"]')!.textContent).to.equal('Checking ••••4321');
    expect(part(el, 'account').querySelector('.sr')!.textContent).to.equal('Checking ••••4321');
  });

  it('shows a known failure in Spanish, marked as Spanish', async () => {
    const el = await mount({ language: 'es' });
    await settle(el, lockedEs);
    const error = part(el, 'error');
    expect(error.textContent).to.contain('Esta cuenta está bloqueada').and.not.contain('This account');
    expect(error.getAttribute('lang')).to.equal('es');
    await expect(el).to.be.accessible();
  });

  it('marks the provider’s English text as English on a Spanish page', async () => {
    const el = await mount({ language: 'es' });
    await settle(el, unknownEs);
    const error = part(el, 'error');
    expect(error.textContent).to.equal('The bank is unavailable.');
    expect(error.getAttribute('lang')).to.equal('en');
    await expect(el).to.be.accessible();
  });

  it('puts no lang on the other screens’ messages', async () => {
    const el = await mount({ language: 'es' });
    await settle(el, unknownEs);
    await settle(el, { type: 'expired', sessionId: SESSION.sessionId });
    expect(el.state).to.equal('expired');
    expect(part(el, 'error').hasAttribute('lang')).to.equal(false);
  });
});

describe('<obv-link-account> titles and colour schemes', () => {
  useWorld();

  it("makes each state's title a heading", async () => {
    const el = await mount();
    const title = el.shadowRoot!.querySelector('.title')!;
    expect(title.tagName).to.equal('H2');
    expect(title.textContent!.trim()).to.equal('Pay from your bank account');
    await settle(el, success);
    expect(el.shadowRoot!.querySelector('h2')!.textContent!.trim()).to.equal('Bank account linked');
  });

  it('follows a dark colour scheme of the page (as the hosted page declares in dark mode), and stays light on a page that declares none', async () => {
    const card = (el: ObvLinkAccountElement) => getComputedStyle(el.shadowRoot!.querySelector('[part~="base"]')!);
    const light = await mount();
    expect(card(light).backgroundColor).to.equal('rgb(255, 255, 255)');
    const dark = await mount({ style: 'color-scheme: dark' });
    expect(card(dark).backgroundColor).to.equal('rgb(31, 36, 43)');
    expect(card(dark).color).to.equal('rgb(238, 240, 243)');
    await expect(dark).to.be.accessible();
    await settle(dark, failure);
    await expect(dark).to.be.accessible();
  });
});

describe('<obv-link-account> on a merchant’s dark surface', () => {
  useWorld();
  const DARK = '--obv-surface:#1c2434;--obv-text:#f3f4f6;--obv-muted:#c3c8d2;--obv-border:#4b5563';

  for (const [what, message] of [
    ['a failure', failure],
    ['an expiry', { type: 'expired', sessionId: SESSION.sessionId }],
  ] as const) {
    for (const language of ['en', 'es']) {
      it(`keeps the default error colour readable after ${what} (${language})`, async () => {
        const el = await mount({ language, style: DARK });
        await settle(el, message);
        expect(el.shadowRoot!.querySelector('[part~="error"]')).not.to.equal(null);
        await expect(el).to.be.accessible();
      });
    }
  }

  it('lets the merchant’s --obv-danger apply as it is', async () => {
    const el = await mount({ style: `${DARK};--obv-danger:#ff8a80` });
    await settle(el, failure);
    expect(getComputedStyle(el.shadowRoot!.querySelector('[part~="error"]')!).color).to.equal('rgb(255, 138, 128)');
  });
});
