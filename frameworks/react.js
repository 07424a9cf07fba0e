// `import 'obv-link/react'`: registers <obv-link-account> (its JSX types are in react.d.ts beside this file).
export { ObvLinkAccountElement, tagName } from '../dist/obv-link-account.js';
