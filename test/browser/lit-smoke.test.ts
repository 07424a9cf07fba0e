// Proves the browser layer in CI: a Lit element compiled from TypeScript renders in real Chromium.
import { expect, fixture, html } from '@open-wc/testing';
import { LitElement, html as litHtml } from 'lit';
import { customElement, property } from 'lit/decorators.js';

@customElement('smoke-greeting')
class SmokeGreeting extends LitElement {
  @property() name = 'world';
  override render() {
    return litHtml`<p>Hello, ${this.name}</p>`;
  }
}

describe('browser layer', () => {
  it('renders a decorated Lit element in Chromium', async () => {
    const el = await fixture<SmokeGreeting>(html`<smoke-greeting name="bank"></smoke-greeting>`);
    expect(el.shadowRoot?.querySelector('p')?.textContent).to.equal('Hello, bank');
    expect(navigator.userAgent).to.contain('Chrome');
  });
});
