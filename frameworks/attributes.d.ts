// The element's attributes (as written in HTML) and its non-string properties, shared by the React and
// Vue typings so the two cannot drift from the element (docs: README "Attributes").
import type { ObvStrings } from '../dist/types/widget/obv-link-account.js';

export interface ObvLinkAccountAttributes {
  'proxy-url'?: string;
  /** The link token your server got from POST {proxy-url}/link-sessions for this checkout (production). */
  'link-token'?: string;
  /** Sandbox mode only, like the purchase and consumer attributes below: a link session sets them. */
  'merchant-user-id'?: string;
  'merchant-transaction-id'?: string;
  amount?: string;
  currency?: string;
  language?: string;
  /** A link reference from an earlier verification of this user, to re-verify that account. */
  'link-ref'?: string;
  'consumer-first-name'?: string;
  'consumer-last-name'?: string;
  'consumer-email'?: string;
  name?: string;
  required?: boolean;
  disabled?: boolean;
  strings?: Partial<ObvStrings>;
}
