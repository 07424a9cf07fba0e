// The bundle entry: registers <obv-link-account> in a browser. Importing it twice (two bundles on one page) is
// harmless, and so is importing it on a server, where it registers nothing.
import { ObvLinkAccountElement } from './obv-link-account-element.ts';

export { ObvLinkAccountElement };
export type { ObvAccount, ObvErrorKind, ObvEventDetails, ObvState } from './events.ts';
export type { ObvStrings } from './strings.ts';

/** The element's tag name. */
export const tagName = 'obv-link-account';

// No customElements on a server (server rendering imports this too): nothing to register there.
if (globalThis.customElements && !customElements.get('obv-link-account'))
  customElements.define('obv-link-account', ObvLinkAccountElement);

declare global {
  interface HTMLElementTagNameMap {
    'obv-link-account': ObvLinkAccountElement;
  }
}
