// The element's production bundle as the hosted link page serves it: the package's own
// dist/obv-link-account.js (what `npm run build` makes, the same bytes as dist/cdn/), under a name carrying
// its hash (cached forever) and with its Subresource Integrity value for the page's <script>. Read once,
// on the first page that needs it; a checkout without a build (running from source) names the file with
// the `hostedElementScript` option.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export interface ElementScript {
  /** `obv-link-account.<10 hex>.js`: a new build is a new name. */
  file: string;
  body: Buffer;
  /** `sha384-…` for the <script integrity>. */
  integrity: string;
}

/** Where the bundle sits from this file: compiled (dist/proxy/pages/) or run from source (proxy/pages/). */
const CANDIDATES = ['../../obv-link-account.js', '../../dist/obv-link-account.js'].map((path) =>
  fileURLToPath(new URL(path, import.meta.url)),
);

/** The element's bundle at `path` (default: the package's build); undefined when there is none. */
export function loadElementScript(path?: string): ElementScript | undefined {
  const found = path ?? CANDIDATES.find((candidate) => existsSync(candidate));
  if (!found || !existsSync(found)) return undefined;
  const body = readFileSync(found);
  const digest = createHash('sha384').update(body).digest();
  return {
    file: `obv-link-account.${digest.toString('hex').slice(0, 10)}.js`,
    body,
    integrity: `sha384-${digest.toString('base64')}`,
  };
}
