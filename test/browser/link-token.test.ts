// The `link-token` attribute: the merchant server's link session for this checkout. The element sends
// the token alone (the proxy takes the purchase from the link session): nothing about the shopper or the
// purchase comes from the page.
import { expect, fixture, html } from '@open-wc/testing';
import sinon from 'sinon';
import '../../widget/obv-link-account.ts';
import type { ObvLinkAccountElement } from '../../widget/obv-link-account-element.ts';
import { FakeSocket, drawn, until, useWorld } from './helpers.ts';

const LINK_TOKEN = `lt_${'Ab3_-x9Z'.repeat(4)}`;

function button(el: ObvLinkAccountElement): HTMLElement {
  return el.shadowRoot!.querySelector<HTMLElement>('[part~="button"]')!;
}

describe('<obv-link-account link-token>', () => {
  const world = useWorld();

  it('starts with the link token alone: no purchase, consumer or language from the page', async () => {
    const el = await drawn(
      await fixture<ObvLinkAccountElement>(
        html`<obv-link-account proxy-url="/obv" language="es" link-token=${LINK_TOKEN}></obv-link-account>`,
      ),
    );
    button(el).click();
    await until(() => el.state === 'waiting' && FakeSocket.instances.length > 0, 'the element to wait on a socket');
    expect(world().proxy.starts.map((start) => start.body)).to.deep.equal([{ linkToken: LINK_TOKEN }]);
  });

  it('ignores the purchase attributes of earlier versions: the link token alone is sent', async () => {
    // merchant-user-id, amount and the rest are no longer the element's: a page that still sets them
    // (or a shopper who adds them in the developer tools) changes nothing the proxy receives.
    const el = await drawn(
      await fixture<ObvLinkAccountElement>(
        html`<obv-link-account proxy-url="/obv" link-token=${LINK_TOKEN} amount="1.00" merchant-user-id="u-1" link-ref="ref-1" consumer-email="a@b.co"></obv-link-account>`,
      ),
    );
    expect(el.state).to.equal('idle');
    button(el).click();
    await until(() => el.state === 'waiting' && FakeSocket.instances.length > 0, 'the element to wait on a socket');
    expect(world().proxy.starts.map((start) => start.body)).to.deep.equal([{ linkToken: LINK_TOKEN }]);
  });

  it('without a link token sends only its language, for a Node app whose enrichStart hook names the purchase', async () => {
    const el = await fixture<ObvLinkAccountElement>(
      html`<obv-link-account proxy-url="/obv" language="es" amount="1.00" merchant-user-id="u-1"></obv-link-account>`,
    );
    button(el).click();
    await until(() => el.state === 'waiting' && FakeSocket.instances.length > 0, 'the element to wait on a socket');
    expect(world().proxy.starts.map((start) => start.body)).to.deep.equal([{ language: 'es' }]);
  });

  it('refuses a link token that is not one (a configuration error, no request)', async () => {
    const warn = sinon.stub(console, 'warn');
    try {
      const el = await fixture<ObvLinkAccountElement>(
        html`<obv-link-account proxy-url="/obv" link-token="sk_live_123"></obv-link-account>`,
      );
      expect(el.state).to.equal('error');
      expect(warn.calledWithMatch('obv-link:', sinon.match(/link-token must be a linkToken/))).to.equal(true);
      expect(world().proxy.requests).to.have.length(0);
    } finally {
      warn.restore();
    }
  });
});
