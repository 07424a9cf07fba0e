// The built file merchants load (dist/obv-link-account.js, built by the test runner into test-results/):
// one module with production Lit inside, whose reactive properties work after minification.
import { expect } from '@open-wc/testing';
import type { ObvLinkAccountElement } from '../../widget/obv-link-account-element.ts';
import { ACCOUNT, FakeSocket, SESSION, drawn, once, until, useWorld } from './helpers.ts';

const BUNDLE = '/test-results/bundle/obv-link-account.js';

describe('the production bundle', () => {
  const world = useWorld();
  before(async () => {
    const module = (await import(/* @vite-ignore */ BUNDLE)) as { ObvLinkAccountElement: unknown; tagName: string };
    expect(module.tagName).to.equal('obv-link-account');
    expect(customElements.get('obv-link-account')).to.equal(module.ObvLinkAccountElement);
  });
  afterEach(() => document.body.replaceChildren());

  it('is a single self-contained module with production Lit', async () => {
    const source = await (await fetch(BUNDLE)).text();
    expect(source).not.to.match(/^\s*import\s/m);
    expect(source).not.to.contain('Lit is in dev mode');
    expect(source).not.to.match(/from\s*["']lit/);
  });

  it('tolerates being loaded twice', async () => {
    const again = `${BUNDLE}?again`;
    await import(/* @vite-ignore */ again);
    expect(customElements.get('obv-link-account')).to.be.a('function');
  });

  it('renders from attributes alone and runs the whole flow to a form value', async () => {
    const linkToken = `lt_${'bundle-9'.repeat(4)}`;
    document.body.innerHTML = `<form><obv-link-account proxy-url="/obv" link-token="${linkToken}" required></obv-link-account></form>`;
    const form = document.querySelector('form')!;
    const el = await drawn(document.querySelector('obv-link-account') as ObvLinkAccountElement);
    expect(el.getAttribute('state')).to.equal('idle');
    expect(el.getAttribute('name')).to.equal('linkRef');
    expect(form.checkValidity()).to.equal(false);
    el.shadowRoot!.querySelector<HTMLButtonElement>('[part="button"]')!.click();
    await until(() => FakeSocket.instances.length > 0, 'a socket');
    expect(world().proxy.starts.map((start) => start.body)).to.deep.equal([{ linkToken }]);
    expect(world().tab.location.href).to.equal(SESSION.consumerUrl);
    FakeSocket.last.accept();
    const success = once(el, 'obv-success');
    FakeSocket.last.receive({
      type: 'result',
      sessionId: SESSION.sessionId,
      outcome: { status: 'success', ...ACCOUNT },
    });
    await success;
    await el.updateComplete;
    expect(el.getAttribute('state')).to.equal('success');
    expect(new FormData(form).get('linkRef')).to.equal(ACCOUNT.linkRef);
    expect(el.shadowRoot!.querySelector('[part="account"]')!.textContent).to.contain('Sandbox Federal Bank');
  });

  it('shows configuration errors from attributes', async () => {
    const errors: string[] = [];
    document.addEventListener('obv-error', (event) => errors.push(event.detail.message), { once: true });
    document.body.innerHTML = '<obv-link-account link-token="sk_live_123"></obv-link-account>';
    const el = document.querySelector('obv-link-account') as ObvLinkAccountElement;
    await el.updateComplete;
    expect(el.state).to.equal('error');
    // The consumer reads what to do; the attribute's name is for the developer (obv-error, console).
    expect(el.shadowRoot!.querySelector('[part="error"]')!.textContent)
      .to.contain('another way to pay')
      .and.not.contain('link-token');
    expect(errors.join()).to.contain('link-token');
  });

  it('styles itself through an adopted stylesheet, with no <style> element (strict CSP)', async () => {
    document.body.innerHTML = '<obv-link-account></obv-link-account>';
    const el = document.querySelector('obv-link-account') as ObvLinkAccountElement;
    await el.updateComplete;
    expect(el.shadowRoot!.adoptedStyleSheets.length).to.equal(1);
    expect(el.shadowRoot!.querySelector('style')).to.equal(null);
    el.style.setProperty('--obv-accent', 'rgb(1, 2, 3)');
    const button = el.shadowRoot!.querySelector('[part="button"]')!;
    expect(getComputedStyle(button).backgroundColor).to.equal('rgb(1, 2, 3)');
  });

  it('works on a page with a strict Content-Security-Policy, without violations', async () => {
    const frame = document.createElement('iframe');
    const loaded = new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
    frame.src = '/csp-fixture/page.html';
    document.body.append(frame);
    await loaded;
    const inner = frame.contentWindow as Window & { violations: string[] };
    await until(() => Boolean(inner.customElements.get('obv-link-account')), 'the element to be defined in the frame');
    const el = await drawn(inner.document.querySelector('obv-link-account') as ObvLinkAccountElement);
    const button = el.shadowRoot!.querySelector('[part="button"]')!;
    expect(inner.getComputedStyle(button).backgroundColor).to.equal('rgb(37, 84, 216)');
    // Violation reports arrive later and in order: provoke one on purpose and wait for it, so any report
    // about the element would be in the list before it.
    const probe = inner.document.createElement('img');
    probe.src = 'https://probe.invalid/probe.png';
    inner.document.body.append(probe);
    await until(() => inner.violations.some((v) => v.includes('probe.invalid')), 'the probe violation');
    expect(inner.violations).to.deep.equal(['img-src https://probe.invalid/probe.png']);
  });
});
