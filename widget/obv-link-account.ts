// The bundle entry: registers <obv-link-account>. Importing it twice (two bundles on one page) is harmless.
import { ObvLinkAccountElement } from './obv-link-account-element.ts';

export { ObvLinkAccountElement };
export type { ObvAccount, ObvErrorKind, ObvEventDetails, ObvState } from './events.ts';
export type { ObvStrings } from './strings.ts';

/** The element's tag name. */
export const tagName = 'obv-link-account';

if (!customElements.get('obv-link-account')) customElements.define('obv-link-account', ObvLinkAccountElement);

declare global {
  interface HTMLElementTagNameMap {
    'obv-link-account': ObvLinkAccountElement;
  }
}
