// The element's attributes (as written in HTML) and its non-string properties, shared by the React and
// Vue typings so the two cannot drift from the element (docs: docs/ELEMENT.md "Attributes").
import type { ObvStrings } from '../dist/types/widget/obv-link-account.js';

export interface ObvLinkAccountAttributes {
  'proxy-url'?: string;
  /** The link token your server got from POST {proxy-url}/link-sessions for this checkout. */
  'link-token'?: string;
  /** The language of the element's words ("en", "es-MX"); the page's `lang` by default. */
  language?: string;
  name?: string;
  required?: boolean;
  disabled?: boolean;
  strings?: Partial<ObvStrings>;
  /**
   * Read-only: the element reflects its `state` here for CSS (`obv-link-account[state="success"]`).
   * A template that sets it is an error, in React and Vue alike.
   */
  state?: never;
}
