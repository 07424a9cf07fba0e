// `import 'obv-link/vue'`: registers <obv-link-account> (its template types are in vue.d.ts beside this file).
export { ObvLinkAccountElement, tagName } from '../dist/obv-link-account.js';
