// Hosted link pages (docs/HOSTED-LINK.md): a link session may ask for a page the proxy serves, for native
// apps, webviews and links sent by e-mail or SMS. The answer's `hostedUrl` carries a hosted reference
// (`hl_…`, 192 random bits), never the link token: the link token is derived from the reference one way
// (a hash), so
// - the store needs nothing new: it holds, as for every link session, only the hash of the link token,
//   from which neither the token nor the hosted reference can be recovered (a Redis dump or a SQLite copy
//   opens no page and starts nothing);
// - the page's holder has exactly the link token's power (the page gives it to its element), no more;
// - the page is reopenable (an app killed, a mail opened twice) while its link session is: until it
//   expires or its order is paid (resolveLinkSession).
// When the flow ends, the page sends the shopper to `completionRedirectUri` with `status` and the
// merchant's own `state` (and, for a failure, its code), and nothing else.
import { createHash, randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { ProxyConfig } from '../config/schema.ts';
import { validationProblem } from '../common/validation.ts';

/** `hl_` and 32 base64url characters: 192 random bits. */
export const HOSTED_REF_PATTERN = /^hl_[A-Za-z0-9_-]{32}$/;

/** How a hosted page's flow ended, as `status` on the completion redirect. */
export const HOSTED_STATUSES = ['linked', 'failed', 'cancelled', 'expired'] as const;
export type HostedStatus = (typeof HOSTED_STATUSES)[number];

/** An absolute URI with a scheme; which schemes are allowed depends on the configuration (checkCompletionUri). */
const CompletionRedirectUri = z
  .string()
  .max(2000)
  .refine((value) => {
    if (!URL.canParse(value)) return false;
    const url = new URL(value);
    return !url.username && !url.password && !url.hash && !value.includes('#');
  }, 'must be an absolute URI without user:password@ or a #fragment, such as https://shop.example/linked or myapp://linked');

/** `hosted` in POST /link-sessions (CONTRACTS §3). */
export const HostedRequest = z.strictObject({
  completionRedirectUri: CompletionRedirectUri.meta({
    description:
      "Where the page sends the shopper when the flow ends, with `status=linked|failed|cancelled|expired` (and `state`, and a failure's `code`) added to its query: " +
      'https, or a custom scheme listed in OBV_HOSTED_REDIRECT_SCHEMES (http only in sandbox mode, to a loopback host)',
  }),
  state: z
    .string()
    .regex(/^[\x21-\x7e]{1,200}$/, 'must be 1-200 visible ASCII characters')
    .optional()
    .meta({
      description:
        'Your own value, echoed verbatim as `state` on the completion redirect (correlate the return with your request)',
    }),
  allowSaving: z
    .boolean()
    .optional()
    .meta({
      description:
        'Offer saving the account from this hosted page (default false). A hosted link can be forwarded: whoever opens it ' +
        'could save their own account for this merchant user. With it, `allowSaving: true` offers the consent box, whose words name ' +
        'whose purchases the account is saved for; without it, a hosted link session with `allowSaving: true` is refused (400).',
    }),
});
export type HostedRequest = z.infer<typeof HostedRequest>;

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Refuses, naming `hosted.completionRedirectUri`, a completion URI the configuration does not allow:
 * https always; a custom scheme only when OBV_HOSTED_REDIRECT_SCHEMES lists it; http only in sandbox mode
 * to a loopback host (a test app on this machine). Anything else (javascript:, data:, an unlisted app)
 * would let a link session send the shopper somewhere the merchant never chose.
 */
export function checkCompletionUri(config: Pick<ProxyConfig, 'hostedRedirectSchemes' | 'sandbox'>, uri: string): void {
  const url = new URL(uri);
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === 'https') return;
  if (scheme === 'http' && config.sandbox && LOOPBACK_HOSTS.has(url.hostname)) return;
  if (scheme !== 'http' && config.hostedRedirectSchemes.includes(scheme)) return;
  const allowed = ['https', ...config.hostedRedirectSchemes].map((name) => `${name}:`).join(', ');
  throw validationProblem('The request body', [
    {
      path: 'hosted.completionRedirectUri',
      message: `must use ${allowed} (custom schemes are listed in OBV_HOSTED_REDIRECT_SCHEMES)`,
    },
  ]);
}

/** A new hosted reference, for the page's URL. */
export function newHostedRef(): string {
  return `hl_${randomBytes(24).toString('base64url')}`;
}

/** The link token a hosted reference stands for: one way, so the token (and its stored hash) never gives the page's URL. */
export function linkTokenOfHostedRef(hostedRef: string): string {
  return `lt_${createHash('sha256').update(`obv-link hosted page\0${hostedRef}`).digest('base64url').slice(0, 32)}`;
}

/** The page's address: `{publicUrl}{mountPath}/hosted/{hostedRef}`. */
export function hostedUrl(config: Pick<ProxyConfig, 'publicUrl' | 'mountPath'>, hostedRef: string): string {
  return `${config.publicUrl.replace(/\/+$/, '')}${config.mountPath}/hosted/${hostedRef}`;
}

/**
 * Where the page sends the shopper for `status`: the merchant's URI with `status` (and `state`) set in its
 * query, its own parameters kept. Nothing else: no token, session or link reference (the merchant's server
 * learns those from its events and GET /links).
 */
export function completionRedirect(hosted: HostedRequest, status: HostedStatus): string {
  const url = new URL(hosted.completionRedirectUri);
  url.searchParams.set('status', status);
  if (hosted.state !== undefined) url.searchParams.set('state', hosted.state);
  return url.href;
}
