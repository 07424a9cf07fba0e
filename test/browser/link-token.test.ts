// The `link-token` attribute: the merchant server's link session for this checkout. The element then
// sends the token alone (the proxy takes the purchase from the link session), and refuses to start when
// the page also sets purchase attributes the link session replaces.
import { expect, fixture, html } from '@open-wc/testing';
import sinon from 'sinon';
import '../../widget/obv-link-account.ts';
import type { ObvLinkAccountElement } from '../../widget/obv-link-account-element.ts';
import { FakeSocket, until, useWorld } from './helpers.ts';

const LINK_TOKEN = `lt_${'Ab3_-x9Z'.repeat(4)}`;

function button(el: ObvLinkAccountElement): HTMLElement {
  return el.shadowRoot!.querySelector<HTMLElement>('[part~="button"]')!;
}

describe('<obv-link-account link-token>', () => {
  const world = useWorld();

  it('starts with the link token alone: no purchase, consumer or language from the page', async () => {
    const el = await fixture<ObvLinkAccountElement>(html`<obv-link-account proxy-url="/obv" language="es" link-token=${LINK_TOKEN}></obv-link-account>`);
    button(el).click();
    await until(() => el.state === 'waiting' && FakeSocket.instances.length > 0, 'the element to wait on a socket');
    expect(world().proxy.bodies[0]).to.deep.equal({ linkToken: LINK_TOKEN });
  });

  it('refuses to start when purchase attributes are set beside the link token, naming them', async () => {
    const warn = sinon.stub(console, 'warn');
    try {
      const el = await fixture<ObvLinkAccountElement>(html`<obv-link-account proxy-url="/obv" link-token=${LINK_TOKEN} amount="1.00" merchant-user-id="u-1"></obv-link-account>`);
      expect(el.state).to.equal('error');
      expect(warn.calledWithMatch('obv-link:', sinon.match(/link-token is set: remove merchant-user-id, amount/))).to.equal(true);
      expect(world().proxy.requests).to.have.length(0);
    } finally {
      warn.restore();
    }
  });

  it('refuses a link token that is not one (a configuration error, no request)', async () => {
    const warn = sinon.stub(console, 'warn');
    try {
      const el = await fixture<ObvLinkAccountElement>(html`<obv-link-account proxy-url="/obv" link-token="sk_live_123"></obv-link-account>`);
      expect(el.state).to.equal('error');
      expect(warn.calledWithMatch('obv-link:', sinon.match(/link-token must be a linkToken/))).to.equal(true);
      expect(world().proxy.requests).to.have.length(0);
    } finally {
      warn.restore();
    }
  });
});
