// The amount rule at the element: its `amount` attribute accepts exactly the amounts the proxy accepts
// (test/node/contracts/amount.test.ts runs the same table through POST /verifications).
import { expect, fixture, html } from '@open-wc/testing';
import sinon from 'sinon';
import '../../widget/obv-link-account.ts';
import type { ObvLinkAccountElement } from '../../widget/obv-link-account-element.ts';
import { ACCEPTED_AMOUNTS, REFUSED_AMOUNTS } from '../contracts/amount-cases.ts';

async function withAmount(amount: string): Promise<{ el: ObvLinkAccountElement; errors: string[] }> {
  const errors: string[] = [];
  const listener = (event: CustomEvent<{ message: string }>) => errors.push(event.detail.message);
  document.addEventListener('obv-error', listener);
  const el = await fixture<ObvLinkAccountElement>(html`<obv-link-account proxy-url="/obv" currency="USD" amount=${amount}></obv-link-account>`);
  await el.updateComplete;
  document.removeEventListener('obv-error', listener);
  return { el, errors };
}

describe('the amount rule at the element (amount attribute)', () => {
  // Each refusal also warns the developer in the console; not what this test reads.
  beforeEach(() => sinon.stub(console, 'warn'));
  afterEach(() => sinon.restore());

  for (const amount of ACCEPTED_AMOUNTS) {
    it(`accepts ${JSON.stringify(amount)}`, async () => {
      const { el, errors } = await withAmount(amount);
      expect(el.state).to.equal('idle');
      expect(errors).to.deep.equal([]);
    });
  }

  for (const amount of REFUSED_AMOUNTS) {
    it(`refuses ${JSON.stringify(amount)} as a configuration error naming amount`, async () => {
      const { el, errors } = await withAmount(amount);
      expect(el.state).to.equal('error');
      expect(errors).to.have.length(1);
      expect(errors[0]).to.match(/^amount /);
    });
  }
});
