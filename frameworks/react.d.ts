// React 19 JSX types for <obv-link-account>. `import 'obv-link/react'` once (it also registers the
// element). React 19 sets a prop as a property when the element has it (`strings`, `disabled`) and
// listens to `on<event-name>` props with addEventListener, so no wrapper component is needed.
import type { DetailedHTMLProps, HTMLAttributes } from 'react';
import type { ObvEventDetails, ObvLinkAccountElement } from '../dist/types/widget/obv-link-account.js';
import type { ObvLinkAccountAttributes } from './attributes.js';

export { ObvLinkAccountElement, tagName } from '../dist/types/widget/obv-link-account.js';
export type { ObvAccount, ObvEventDetails, ObvState, ObvStrings } from '../dist/types/widget/obv-link-account.js';

/** `on<event-name>` listener props: `onobv-success={(event) => event.detail.accountLabel}`. */
export type ObvLinkAccountEventProps = {
  [K in keyof ObvEventDetails as `on${K}`]?: (event: CustomEvent<ObvEventDetails[K]>) => void;
};

/** The element's attributes (as written in HTML) and its non-string properties. */
export interface ObvLinkAccountProps
  extends
    DetailedHTMLProps<HTMLAttributes<ObvLinkAccountElement>, ObvLinkAccountElement>,
    ObvLinkAccountEventProps,
    ObvLinkAccountAttributes {}

declare module 'react' {
  namespace JSX {
    interface IntrinsicElements {
      'obv-link-account': ObvLinkAccountProps;
    }
  }
}
