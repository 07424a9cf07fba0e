// Vue 3 template types for <obv-link-account> (the pattern of Vue's guide, "Non-Vue Web Components and
// TypeScript"). `import 'obv-link/vue'` once (it also registers the element) and tell the compiler the tag
// is a custom element (`compilerOptions.isCustomElement`, docs/ELEMENT.md "Vue").
import type { EmitFn, HTMLAttributes, PublicProps } from 'vue';
import type { ObvEventDetails, ObvLinkAccountElement } from '../dist/types/widget/obv-link-account.js';
import type { ObvLinkAccountAttributes } from './attributes.js';

export { ObvLinkAccountElement, tagName } from '../dist/types/widget/obv-link-account.js';
export type { ObvAccount, ObvEventDetails, ObvState, ObvStrings } from '../dist/types/widget/obv-link-account.js';

/** `link-token` → `linkToken`: Vue's template checker passes a component's attributes under camelCase names. */
type Camelize<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<Camelize<Tail>>}` : S;

/**
 * The element's attributes and its non-string properties, under the names Vue checks them by
 * (`:link-token="42"` is checked as `linkToken`, so a kebab-case key alone would let any value through).
 */
export type ObvLinkAccountVueProps = {
  [K in keyof ObvLinkAccountAttributes as Camelize<K>]: ObvLinkAccountAttributes[K];
};

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
