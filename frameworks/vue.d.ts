// Vue 3 template types for <obv-link-account> (the pattern of Vue's guide, "Non-Vue Web Components and
// TypeScript"). `import 'obv-link/vue'` once (it also registers the element) and tell the compiler the tag
// is a custom element (`compilerOptions.isCustomElement`, README "Vue").
import type { EmitFn, HTMLAttributes, PublicProps } from 'vue';
import type { ObvEventDetails, ObvLinkAccountElement } from '../dist/types/widget/obv-link-account.js';
import type { ObvLinkAccountAttributes } from './attributes.js';

export { ObvLinkAccountElement, tagName } from '../dist/types/widget/obv-link-account.js';
export type { ObvAccount, ObvEventDetails, ObvState, ObvStrings } from '../dist/types/widget/obv-link-account.js';

/** The element's attributes (as written in HTML) and its non-string properties. */
export type ObvLinkAccountVueProps = ObvLinkAccountAttributes;

type ObvLinkAccountEmits = { [K in keyof ObvEventDetails]: (event: CustomEvent<ObvEventDetails[K]>) => void };

/** What Vue's template type-checker sees for the tag (a component type; not a runtime value). */
export type ObvLinkAccountVueComponent = new () => ObvLinkAccountElement & {
  /** @deprecated For template type-checking only; not a property of the element. */
  $props: HTMLAttributes & ObvLinkAccountVueProps & PublicProps;
  /** @deprecated For template type-checking only; not a method of the element. */
  $emit: EmitFn<ObvLinkAccountEmits>;
};

declare module 'vue' {
  interface GlobalComponents {
    'obv-link-account': ObvLinkAccountVueComponent;
  }
}
