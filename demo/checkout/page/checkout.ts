// The checkout page's own behaviour, as a merchant would write it: log the element's events, enable
// Pay once an account is linked, and keep the display-only account label for the receipt.
import type { ObvEventName } from '../../../widget/events.ts';
import type { ObvLinkAccountElement } from '../../../widget/obv-link-account-element.ts';
import { EventLog } from './event-log.ts';

/**
 * Every event the element documents. Typed against the widget's event map, so an event added or
 * renamed there fails the type check here instead of silently missing from the panel.
 */
const ELEMENT_EVENTS = Object.keys({
  'obv-start': true,
  'obv-open': true,
  'obv-state-change': true,
  'obv-success': true,
  'obv-failure': true,
  'obv-cancel': true,
  'obv-error': true,
} satisfies Record<ObvEventName, true>) as ObvEventName[];

function byId<T extends HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`checkout: #${id} is missing from the page`);
  return element as T;
}

const form = byId<HTMLFormElement>('payment-form');
const element = byId<ObvLinkAccountElement>('obv');
const payButton = byId<HTMLButtonElement>('pay-button');
const payHint = byId<HTMLElement>('pay-hint');
const payLabel = payButton.querySelector('span')?.textContent ?? 'Pay';
const log = new EventLog(byId<HTMLOListElement>('event-log'), byId<HTMLElement>('events-empty'));

/**
 * This script runs before the element's bundle (so the panel sees the events of its first update,
 * e.g. a session resumed after a reload); its state and validity exist once it has rendered.
 */
async function whenElementReady(): Promise<void> {
  await customElements.whenDefined('obv-link-account');
  await element.updateComplete;
}

/** The linked account's line as the element shows it (in its language) and as a screen reader should say it, from obv-success. */
let displayLabel = '';
let spokenLabel = '';
element.addEventListener('obv-success', (event) => ({ displayLabel, spokenLabel } = event.detail));

/**
 * The hint under Pay speaks the element's language, like the account line in it: one language per
 * sentence ("Paying from Corriente ••••4321" would mix two). Marked with `lang` for screen readers.
 */
const HINT = {
  en: {
    paying: (line: Node[], bank: string) => ['Paying from ', ...line, ` at ${bank}.`],
    missing: 'Link a bank account to continue.',
  },
  es: {
    paying: (line: Node[], bank: string) => ['Pagas desde ', ...line, ` en ${bank}.`],
    missing: 'Vincula una cuenta bancaria para continuar.',
  },
};
const hintLang: keyof typeof HINT = element.getAttribute('language') === 'es' ? 'es' : 'en';
payHint.lang = hintLang;

/**
 * The account line shown with its bullets, and read without them. The hint describes Pay and is no live
 * region: the element's status announces the success, and two regions at once talk over each other.
 */
function accountLine(shown: string): Node[] {
  const visible = Object.assign(document.createElement('span'), { textContent: shown });
  visible.setAttribute('aria-hidden', 'true');
  const spoken = Object.assign(document.createElement('span'), {
    className: 'visually-hidden',
    textContent: spokenLabel || shown,
  });
  return [visible, spoken];
}

function updatePayButton(): void {
  // Pay needs a linked account the element shows as linked (it keeps the previous account while the
  // consumer tries to change it) and a valid form (the element is form-associated and `required`).
  // (`account` is set in the success state, and in `saved` once the chosen saved account is ready.)
  const account = element.account;
  const ready = account !== undefined && form.checkValidity();
  payButton.disabled = !ready;
  if (ready)
    payHint.replaceChildren(
      ...HINT[hintLang].paying(accountLine(displayLabel || account.accountLabel), account.fiName),
    );
  else payHint.textContent = HINT[hintLang].missing;
}

for (const name of ELEMENT_EVENTS) {
  element.addEventListener(name, (event) => {
    log.add(event);
    // The element sets its form value when it re-renders, just after it fires; check once it has.
    void element.updateComplete.then(updatePayButton);
  });
}
// Its form value changed with no new state too: a saved account's link withdrawn while another is chosen.
element.addEventListener('change', updatePayButton);

form.addEventListener('submit', (event) => {
  if (payButton.disabled || !form.checkValidity()) {
    event.preventDefault();
    return;
  }
  // One charge per click: the button stays busy until the result page loads.
  payButton.disabled = true;
  payButton.classList.add('is-busy');
  payButton.querySelector('span')!.textContent = 'Processing…';
});

// Coming back with the Back button restores the page from the back/forward cache, busy button included.
window.addEventListener('pageshow', (event) => {
  if (!event.persisted) return;
  payButton.classList.remove('is-busy');
  payButton.querySelector('span')!.textContent = payLabel;
  void whenElementReady().then(updatePayButton);
});

byId<HTMLButtonElement>('events-clear').addEventListener('click', () => log.clear());
void whenElementReady().then(updatePayButton);
