// The element as a form control: its value is the account token, `required` keeps the form invalid,
// reset and disabled fieldsets behave like native controls; plus `disabled` and keyboard use.
import { expect, fixture, html } from '@open-wc/testing';
import { sendKeys } from '@web/test-runner-commands';
import '../../widget/obv-link-account.ts';
import { ObvLinkAccountElement } from '../../widget/obv-link-account-element.ts';
import { ACCOUNT, FakeSocket, SESSION, once, useWorld, until } from './helpers.ts';

function focusedPart(el: ObvLinkAccountElement): string | null {
  return el.shadowRoot?.activeElement?.getAttribute('part') ?? null;
}

async function link(el: ObvLinkAccountElement): Promise<void> {
  el.shadowRoot!.querySelector<HTMLElement>('[part~="button"]')!.click();
  await until(() => FakeSocket.instances.length > 0, 'a socket');
  FakeSocket.last.accept();
  const success = once(el, 'obv-success');
  FakeSocket.last.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...ACCOUNT } });
  await success;
  await el.updateComplete;
}

describe('<obv-link-account> in a form', () => {
  const world = useWorld();

  it('keeps a required element invalid with a message until an account is linked, then submits the token', async () => {
    const form = await fixture<HTMLFormElement>(html`<form><obv-link-account required></obv-link-account></form>`);
    const el = form.querySelector('obv-link-account')!;
    await el.updateComplete;
    expect(el.form).to.equal(form);
    expect(form.checkValidity()).to.equal(false);
    expect(el.validity.valueMissing).to.equal(true);
    expect(el.validationMessage).to.equal('Link a bank account to continue.');
    expect(new FormData(form).has('linkRef')).to.equal(false);
    await link(el);
    expect(el.value).to.equal(ACCOUNT.linkRef);
    expect(form.checkValidity()).to.equal(true);
    expect(new FormData(form).get('linkRef')).to.equal(ACCOUNT.linkRef);
  });

  it('fires change, as form controls do, each time its value changes: linked, then withdrawn by "Change"', async () => {
    const form = await fixture<HTMLFormElement>(html`<form><obv-link-account></obv-link-account></form>`);
    const el = form.querySelector('obv-link-account')!;
    await el.updateComplete;
    const values: string[] = [];
    form.addEventListener('change', (event) => values.push((event.target as ObvLinkAccountElement).value));
    await link(el);
    expect(values).to.deep.equal([ACCOUNT.linkRef]);
    el.shadowRoot!.querySelector<HTMLElement>('[part~="button"]')!.click(); // Change
    await el.updateComplete;
    expect(values).to.deep.equal([ACCOUNT.linkRef, '']);
  });

  it('is valid without an account when not required', async () => {
    const form = await fixture<HTMLFormElement>(html`<form><obv-link-account></obv-link-account></form>`);
    await form.querySelector('obv-link-account')!.updateComplete;
    expect(form.checkValidity()).to.equal(true);
  });

  it('submits the token under the name attribute', async () => {
    const form = await fixture<HTMLFormElement>(
      html`<form><obv-link-account name="bankToken"></obv-link-account></form>`,
    );
    const el = form.querySelector('obv-link-account')!;
    await link(el);
    expect(new FormData(form).get('bankToken')).to.equal(ACCOUNT.linkRef);
    expect(new FormData(form).has('linkRef')).to.equal(false);
  });

  it('forgets the account and returns to idle when the form is reset', async () => {
    const form = await fixture<HTMLFormElement>(html`<form><obv-link-account required></obv-link-account></form>`);
    const el = form.querySelector('obv-link-account')!;
    await link(el);
    form.reset();
    await el.updateComplete;
    expect(el.state).to.equal('idle');
    expect(el.value).to.equal('');
    expect(el.account).to.equal(undefined);
    expect(new FormData(form).has('linkRef')).to.equal(false);
    expect(form.checkValidity()).to.equal(false);
  });

  it('disables its buttons inside a disabled fieldset', async () => {
    const form = await fixture<HTMLFormElement>(
      html`<form><fieldset disabled><obv-link-account></obv-link-account></fieldset></form>`,
    );
    const el = form.querySelector('obv-link-account')!;
    await el.updateComplete;
    // The form's disabled state arrives through formDisabledCallback, applied after the current update.
    await until(() => el.shadowRoot!.querySelector('button')!.disabled, 'the button to be disabled');
    form.querySelector('fieldset')!.disabled = false;
    await until(() => !el.shadowRoot!.querySelector('button')!.disabled, 'the button to be enabled again');
  });

  it('turns its button back on when the disabled property is set back to false', async () => {
    const el = await fixture<ObvLinkAccountElement>(html`<obv-link-account></obv-link-account>`);
    el.disabled = true;
    await el.updateComplete;
    expect(el.shadowRoot!.querySelector('button')!.disabled).to.equal(true);
    // What React 19 and Vue 3 do for `disabled={false}`: set the property, not remove the attribute.
    el.disabled = false;
    await el.updateComplete;
    await until(() => !el.shadowRoot!.querySelector('button')!.disabled, 'the button to be enabled again');
    expect(el.hasAttribute('disabled')).to.equal(false);
  });

  it('keeps properties set on the tag before the element was defined', async () => {
    // A page (or a framework) may set properties before the element's script has run.
    const el = document.createElement('obv-link-account-before-upgrade') as ObvLinkAccountElement;
    el.strings = { linkAccount: 'Connect your bank' };
    el.disabled = true;
    document.body.append(el);
    try {
      customElements.define('obv-link-account-before-upgrade', class extends ObvLinkAccountElement {});
      await el.updateComplete;
      const button = el.shadowRoot!.querySelector('button')!;
      expect(button.textContent).to.contain('Connect your bank');
      expect(button.disabled).to.equal(true);
      expect(el.hasAttribute('disabled')).to.equal(true);
    } finally {
      el.remove();
    }
  });

  it('does nothing on click while disabled, and reflects disabled', async () => {
    const el = await fixture<ObvLinkAccountElement>(html`<obv-link-account></obv-link-account>`);
    el.disabled = true;
    await el.updateComplete;
    expect(el.hasAttribute('disabled')).to.equal(true);
    const button = el.shadowRoot!.querySelector('button')!;
    expect(button.disabled).to.equal(true);
    el.start();
    expect(world().open.called).to.equal(false);
    expect(el.state).to.equal('idle');
  });
});

describe('<obv-link-account> value while changing the linked account', () => {
  const world = useWorld();
  const NEW_ACCOUNT = { ...ACCOUNT, linkRef: 'ref_9876', accountLabel: 'Savings ••••9876', fiAccountType: 'SAVINGS' };

  /** A required element in a form, linked to ACCOUNT, then "Change" pressed and waiting on a new socket. */
  async function changing(): Promise<{ form: HTMLFormElement; el: ObvLinkAccountElement; socket: FakeSocket }> {
    const form = await fixture<HTMLFormElement>(html`<form><obv-link-account required></obv-link-account></form>`);
    const el = form.querySelector('obv-link-account')!;
    await link(el);
    const button = el.shadowRoot!.querySelector<HTMLElement>('[part~="button"]')!;
    expect(button.textContent).to.contain('Change');
    button.click();
    await until(() => el.state === 'waiting' && FakeSocket.instances.length === 2, 'the change to wait on a socket');
    await el.updateComplete;
    FakeSocket.last.accept();
    return { form, el, socket: FakeSocket.last };
  }

  function expectNoValue(form: HTMLFormElement, el: ObvLinkAccountElement): void {
    expect(el.value).to.equal('');
    expect(el.account).to.equal(undefined);
    expect(new FormData(form).has('linkRef')).to.equal(false);
    expect(el.validity.valueMissing).to.equal(true);
    expect(form.checkValidity()).to.equal(false);
  }

  function expectValue(form: HTMLFormElement, el: ObvLinkAccountElement, token: string): void {
    expect(el.state).to.equal('success');
    expect(el.value).to.equal(token);
    expect(el.account?.linkRef).to.equal(token);
    expect(new FormData(form).get('linkRef')).to.equal(token);
    expect(form.checkValidity()).to.equal(true);
  }

  it('submits no token while the new verification is under way, and the old one again after Cancel', async () => {
    const { form, el } = await changing();
    expectNoValue(form, el);
    el.shadowRoot!.querySelector<HTMLElement>('[part~="secondary-button"]')!.click();
    await el.updateComplete;
    expectValue(form, el, ACCOUNT.linkRef);
  });

  it('submits no stale token while a failed change is on screen; Cancel brings the previous account back', async () => {
    const { form, el, socket } = await changing();
    socket.receive({
      type: 'result',
      sessionId: SESSION.sessionId,
      outcome: { status: 'failure', code: 'ACCOUNT_LOCKED', message: 'Locked.' },
    });
    await el.updateComplete;
    expect(el.state).to.equal('failure');
    expect(el.shadowRoot!.querySelector('[part~="account"]')).to.equal(null);
    expectNoValue(form, el);
    const cancelled = once(el, 'obv-cancel');
    el.shadowRoot!.querySelector<HTMLElement>('[part~="secondary-button"]')!.click();
    await cancelled;
    await el.updateComplete;
    expectValue(form, el, ACCOUNT.linkRef);
  });

  it('submits no stale token while an expired change is on screen', async () => {
    const { form, el, socket } = await changing();
    socket.receive({ type: 'expired', sessionId: SESSION.sessionId });
    await el.updateComplete;
    expect(el.state).to.equal('expired');
    expectNoValue(form, el);
  });

  it('submits no stale token while a network error of a change is on screen', async () => {
    const form = await fixture<HTMLFormElement>(html`<form><obv-link-account required></obv-link-account></form>`);
    const el = form.querySelector('obv-link-account')!;
    await link(el);
    world().proxy.routes['POST /obv/verifications'] = () => new TypeError('Failed to fetch');
    el.shadowRoot!.querySelector<HTMLElement>('[part~="button"]')!.click();
    await until(() => el.state === 'error', 'the network error');
    await el.updateComplete;
    expectNoValue(form, el);
  });

  it('submits the new token once the change succeeds', async () => {
    const { form, el, socket } = await changing();
    socket.receive({ type: 'result', sessionId: SESSION.sessionId, outcome: { status: 'success', ...NEW_ACCOUNT } });
    await el.updateComplete;
    expectValue(form, el, NEW_ACCOUNT.linkRef);
  });

  it('offers no Cancel on a failure when no account was linked before', async () => {
    const form = await fixture<HTMLFormElement>(html`<form><obv-link-account required></obv-link-account></form>`);
    const el = form.querySelector('obv-link-account')!;
    el.start();
    await until(() => FakeSocket.instances.length > 0, 'a socket');
    FakeSocket.last.accept();
    FakeSocket.last.receive({
      type: 'result',
      sessionId: SESSION.sessionId,
      outcome: { status: 'failure', code: 'X', message: 'No.' },
    });
    await el.updateComplete;
    expect(el.shadowRoot!.querySelector('[part~="secondary-button"]')).to.equal(null);
    el.cancel();
    expect(el.state).to.equal('failure');
  });
});

describe('<obv-link-account> with the keyboard', () => {
  const world = useWorld();

  it('starts with Enter, moves focus to the bank-tab button, and to the status after success (Change one Tab away)', async () => {
    const el = await fixture<ObvLinkAccountElement>(html`<obv-link-account></obv-link-account>`);
    await sendKeys({ press: 'Tab' });
    expect(focusedPart(el)).to.equal('button');
    const started = once(el, 'obv-start');
    await sendKeys({ press: 'Enter' });
    await started;
    expect(world().open.calledOnce).to.equal(true);
    await until(() => el.state === 'waiting', 'waiting');
    await el.updateComplete;
    await until(() => focusedPart(el) === 'button', 'focus on "Go to your bank"');
    expect(el.shadowRoot!.activeElement!.textContent).to.contain('Go to your bank');
    await sendKeys({ press: 'Enter' });
    // Named as the tab was opened (a name of its own per bank step).
    expect(world().open.lastCall.args).to.deep.equal(['', world().open.firstCall.args[1]]);
    expect(world().open.firstCall.args[1]).to.match(/^obv-bank\w+$/);
    FakeSocket.last.accept();
    FakeSocket.last.receive({
      type: 'result',
      sessionId: SESSION.sessionId,
      outcome: { status: 'success', ...ACCOUNT },
    });
    await until(() => el.state === 'success', 'success');
    await el.updateComplete;
    // On the status, which reads the outcome: not on "Change", where one more Enter would drop the account.
    await until(() => focusedPart(el) === 'status', 'focus on the status');
    await sendKeys({ press: 'Tab' });
    expect(focusedPart(el)).to.equal('button');
    expect(el.shadowRoot!.activeElement!.textContent).to.contain('Change');
  });

  it('keeps focus through the flow inside another component’s shadow root too', async () => {
    const host = await fixture<HTMLDivElement>(html`<div></div>`);
    const el = document.createElement('obv-link-account');
    host.attachShadow({ mode: 'open' }).append(el);
    await el.updateComplete;
    await sendKeys({ press: 'Tab' });
    expect(focusedPart(el)).to.equal('button');
    await sendKeys({ press: 'Enter' });
    await until(() => el.state === 'waiting', 'waiting');
    await el.updateComplete;
    await until(() => focusedPart(el) === 'button', 'focus on "Go to your bank"');
    FakeSocket.last.accept();
    FakeSocket.last.receive({
      type: 'result',
      sessionId: SESSION.sessionId,
      outcome: { status: 'success', ...ACCOUNT },
    });
    await el.updateComplete;
    await until(() => focusedPart(el) === 'status', 'focus on the status');
    await sendKeys({ press: 'Tab' });
    expect(el.shadowRoot!.activeElement!.textContent).to.contain('Change');
  });

  it('cancels from the keyboard and lands on the link button again', async () => {
    const el = await fixture<ObvLinkAccountElement>(html`<obv-link-account></obv-link-account>`);
    el.focus();
    await sendKeys({ press: 'Enter' });
    await until(() => el.state === 'waiting', 'waiting');
    await el.updateComplete;
    await sendKeys({ press: 'Tab' });
    expect(focusedPart(el)).to.equal('secondary-button');
    const cancelled = once(el, 'obv-cancel');
    await sendKeys({ press: 'Enter' });
    await cancelled;
    await el.updateComplete;
    await until(() => focusedPart(el) === 'button', 'focus on the main control');
    expect(el.shadowRoot!.activeElement!.textContent).to.contain('Link your bank account');
  });
});
