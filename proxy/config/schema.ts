// The proxy's configuration: one zod schema over a camelCase object, used both by code
// (`createObvProxy({...})`) and by the CLI (environment variables mapped onto it), so both paths get
// the same defaults and the same checks. A bad value is reported by its env name when it came from env.
import { BlockList, isIP, isIPv4, SocketAddress } from 'node:net';
import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { SANDBOX_DEFAULTS, withSandboxDefaults } from './sandbox-defaults.ts';
import { DEFAULT_DATA_DIR, DEFAULT_REDIS_PREFIX, LINK_SESSION_TTL_MAX_MS, RECORD_GRACE_MS } from './limits.ts';
import { isSandboxSealingKey, SealingKeyList } from './sealing-keys.ts';
import { webhookKeyBytes } from '../common/webhook-signature.ts';
import { unknownVariables } from './unknown-variables.ts';
import { MerchantApiKeyList, MIN_API_KEY_LENGTH } from './merchant-api-keys.ts';

const DURATION = /^(\d+)(ms|s|m|h)?$/;
const DURATION_FORMS = 'must be a duration greater than zero: 30m, 90s, 1500ms, 2h, or a number of seconds';
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Milliseconds as the duration forms read them back: `18h 44m 50s`, `30m`, `1500ms`. */
export function formatDuration(ms: number): string {
  const parts = [[Math.floor(ms / UNIT_MS.h), 'h'], [Math.floor(ms / UNIT_MS.m) % 60, 'm'], [Math.floor(ms / UNIT_MS.s) % 60, 's'], [ms % 1000, 'ms']] as const;
  return parts.filter(([amount]) => amount > 0).map(([amount, unit]) => `${amount}${unit}`).join(' ') || '0s';
}

/** "30m", "90s", "1500ms", "2h", or a bare number of seconds → milliseconds. Numbers are taken as ms. */
const Duration = z.union([
  z.number().int().positive(),
  z
    .string()
    .trim()
    .regex(DURATION, DURATION_FORMS)
    .transform((value) => {
      const [, amount, unit] = DURATION.exec(value) ?? [];
      return Number(amount) * UNIT_MS[(unit ?? 's') as keyof typeof UNIT_MS];
    })
    .pipe(z.number().int().positive(DURATION_FORMS)),
], { error: DURATION_FORMS });

/** Exactly `true` or `false`: `1`, `yes` or `TRUE` are refused rather than guessed (they once meant sandbox mode). */
const Bool = z.union([
  z.boolean(),
  z.enum(['true', 'false']).transform((value) => value === 'true'),
], { error: 'must be true or false' });

const HttpUrl = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL such as https://shop.example' });

const Origin = z
  .string()
  .trim()
  .pipe(HttpUrl)
  // Checks run on a value the URL check refused too (a format issue does not abort): guard the parse.
  .refine((value) => !URL.canParse(value) || new URL(value).origin === value.replace(/\/$/, ''), 'must be an origin (scheme://host[:port]) without a path')
  .transform((value) => new URL(value).origin);

const OriginList = z.union([
  z.array(Origin),
  z
    .string()
    .transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean))
    .pipe(z.array(Origin)),
], { error: 'must be a comma list of origins such as https://shop.example, https://www.shop.example' });

const Text = z.string().trim().min(1, 'must not be empty');

/**
 * Schemes a hosted page may send the shopper back to (an app's own, `myapp` or `com.shop.app`): never one
 * that runs or reads something in the browser, nor http(s) (https is always allowed, http never outside
 * sandbox loopback: link-sessions/hosted.ts).
 */
const REFUSED_SCHEMES = new Set(['http', 'https', 'javascript', 'data', 'file', 'blob', 'about', 'vbscript', 'filesystem', 'ws', 'wss', 'ftp', 'intent', 'chrome', 'view-source']);
const RedirectScheme = z.string().trim().toLowerCase()
  .regex(/^[a-z][a-z0-9+.-]{0,62}$/, 'must be URI schemes such as myapp or com.shop.app (letters, digits, "+", ".", "-")')
  .refine((scheme) => !REFUSED_SCHEMES.has(scheme), 'must not list http, https, javascript, data, file, blob or another browser scheme');
const RedirectSchemeList = z.union([
  z.array(z.string()),
  z.string().transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean)),
], { error: 'must be a comma list of URI schemes such as myapp,com.shop.app' }).pipe(z.array(RedirectScheme));

/** A comma list of words (`SUCCESS,VERIFIED`), or an array: the `verificationStatus` values to accept. */
const StatusWords = z.union([
  z.array(Text),
  z.string().transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean)),
]).pipe(z.array(z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'must be words of letters, digits, "_" or "-"')).min(1, 'must name at least one status'));

const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/=]+$/;
const WEBHOOK_SECRET_MESSAGE = 'must be a Standard Webhooks secret: whsec_ followed by base64';

/** Secrets that sign merchant events: an array, or a comma list (during a rotation every one signs). */
const WebhookSecretList = z.union([
  z.array(Text),
  z.string().transform((value) => value.split(',').map((item) => item.trim()).filter(Boolean)),
]).pipe(z.array(z.string().regex(WEBHOOK_SECRET, WEBHOOK_SECRET_MESSAGE)).min(1, 'must list at least one secret'));

/** Named subnets proxy-addr (Express's `trust proxy`) knows. */
const NAMED_SUBNETS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** The prefix length a dotted IPv4 netmask stands for; undefined when its one-bits are not contiguous. */
function netmaskPrefix(mask: string): number | undefined {
  const bits = mask.split('.').map((octet) => Number(octet).toString(2).padStart(8, '0')).join('');
  return /^1*0*$/.test(bits) ? bits.indexOf('0') === -1 ? 32 : bits.indexOf('0') : undefined;
}

/**
 * How wide a trusted range may be (docs/PROXY.md "Security notes"). A trusted range is one whose clients may
 * choose their address with X-Forwarded-For, so none may cover public address space broadly:
 * - IPv4 inside a private, loopback, link-local or CGNAT range (INTERNAL_IPV4): as wide as that range;
 * - public IPv4: /12 or narrower each (a CDN publishes ranges up to /13), and at most
 *   `publicIpv4Addresses` in all (as many as one /10; Cloudflare's whole list is about 1.5 million), so
 *   the internet cannot be trusted in pieces either;
 * - IPv6: /32 or narrower, unless it lies inside fc00::/7 (unique local) or fe80::/10 (link-local);
 * - IPv4-mapped IPv6 (::ffff:a.b.c.d/n, which also matches IPv4 clients): judged as IPv4 /(n − 96).
 */
export const TRUST_PROXY_WIDEST = { publicIpv4: 12, ipv6: 32, publicIpv4Addresses: 2 ** 22 } as const;
/** A one-range BlockList, for "is this address inside". */
function range(network: string, prefix: number, family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return list;
}
const ipv6Range = (network: string, prefix: number) => range(network, prefix, 'ipv6');
/** IPv4 ranges that are not public: 10/8, 172.16/12, 192.168/16 (RFC 1918), loopback, link-local, CGNAT (RFC 6598). */
const INTERNAL_IPV4 = ([['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['127.0.0.0', 8], ['169.254.0.0', 16], ['100.64.0.0', 10]] as const)
  .map(([network, prefix]) => ({ range: range(network, prefix, 'ipv4'), prefix }));
/** IPv6 ranges that are not public: a range inside one of them may be as wide as the range itself. */
const LOCAL_IPV6 = [{ range: ipv6Range('fc00::', 7), prefix: 7 }, { range: ipv6Range('fe80::', 10), prefix: 10 }];
const MAPPED_IPV4 = ipv6Range('::ffff:0:0', 96);

/** What a range is: too wide to trust (why), or how many public IPv4 addresses it trusts. */
type RangeVerdict = { problem: string } | { publicIpv4: number };

/** An IPv4 range (the address may be any inside it): internal ranges pass, a public one is counted. */
function ipv4Verdict(shown: string, address: string, prefix: number): RangeVerdict {
  if (INTERNAL_IPV4.some((inside) => prefix >= inside.prefix && inside.range.check(address, 'ipv4'))) return { publicIpv4: 0 };
  if (prefix < TRUST_PROXY_WIDEST.publicIpv4) {
    return { problem: `${shown} covers public address space broadly (a public IPv4 range wider than /${TRUST_PROXY_WIDEST.publicIpv4})` };
  }
  return { publicIpv4: 2 ** (32 - prefix) };
}

/** The verdict on `shown` (the entry as written), the range `address`/`prefix`. */
function rangeVerdict(shown: string, address: string, family: 4 | 6, prefix: number): RangeVerdict {
  if (family === 4) return ipv4Verdict(shown, address, prefix);
  if (prefix <= 96 && ipv6Range(address, prefix).check('::ffff:0:0', 'ipv6')) return { problem: `${shown} covers every IPv4 address (as ::ffff:0:0/96)` };
  if (MAPPED_IPV4.check(address, 'ipv6')) {
    // Any spelling (::ffff:8.0.0.0, ::ffff:800:0, 0:0:0:0:0:ffff:…) in node:net's one form, then as IPv4.
    const ipv4 = new SocketAddress({ address, family: 'ipv6' }).address.slice('::ffff:'.length);
    return ipv4Verdict(shown, ipv4, prefix - 96);
  }
  if (prefix >= TRUST_PROXY_WIDEST.ipv6) return { publicIpv4: 0 };
  const local = LOCAL_IPV6.some((inside) => prefix >= inside.prefix && inside.range.check(address, 'ipv6'));
  return local ? { publicIpv4: 0 } : { problem: `${shown} covers public address space broadly (wider than /${TRUST_PROXY_WIDEST.ipv6} outside fc00::/7 and fe80::/10)` };
}

/** Whether proxy-addr (what Express compiles `trust proxy` with) reads the entry at all. */
function proxyAddrReads(entry: string): boolean {
  try {
    proxyAddr.compile([entry]);
    return true;
  } catch {
    return false;
  }
}

/**
 * An entry that is not an address, `address/prefix`, `address/netmask` or a named subnet (the forms
 * Express's `trust proxy` takes, read as both node:net and proxy-addr read them), or that is too wide
 * to trust: why. Otherwise how many public IPv4 addresses it trusts.
 */
function trustedProxyEntryVerdict(entry: string): RangeVerdict {
  if (NAMED_SUBNETS.has(entry)) return { publicIpv4: 0 };
  const [address = '', written, ...extra] = entry.split('/');
  const family = isIP(address);
  const malformed = { problem: `${entry} is not an address, address/prefix, IPv4 address/netmask or loopback, linklocal, uniquelocal` };
  if (family === 0 || extra.length > 0) return malformed;
  let prefix: number | undefined = written === undefined ? (family === 4 ? 32 : 128) : undefined;
  if (written !== undefined && /^\d{1,3}$/.test(written)) prefix = Number(written) <= (family === 4 ? 32 : 128) ? Number(written) : undefined;
  else if (written !== undefined && family === 4 && isIPv4(written)) prefix = netmaskPrefix(written);
  if (prefix === undefined) return malformed;
  const verdict = rangeVerdict(entry, address, family as 4 | 6, prefix);
  return 'problem' in verdict || proxyAddrReads(entry) ? verdict : malformed;
}

const TRUST_PROXY_MESSAGE = 'must be a hop count (1 = one load balancer) or a comma list of proxy addresses/subnets '
  + '(e.g. 10.0.0.0/8, loopback); `true` would let any client choose its own address with X-Forwarded-For';
/** The accepted forms, for a refused entry (docs/PROXY.md "Security notes" says why). */
const TRUST_PROXY_FORMS = 'accepted: a hop count, or a comma list of addresses, private subnets (inside 10.0.0.0/8, 172.16.0.0/12, '
  + `192.168.0.0/16, 127.0.0.0/8, 169.254.0.0/16, 100.64.0.0/10), public IPv4 subnets of /${TRUST_PROXY_WIDEST.publicIpv4} or narrower `
  + `(${TRUST_PROXY_WIDEST.publicIpv4Addresses.toLocaleString('en-US')} public addresses in all), IPv6 subnets of /${TRUST_PROXY_WIDEST.ipv6} `
  + 'or narrower (wider only inside fc00::/7 or fe80::/10), loopback, linklocal, uniquelocal';
/** Refused entries named one by one; past this many, the rest are counted. */
const TRUST_PROXY_NAMED_REFUSALS = 5;

/** Adds one issue per refused entry (the first few), naming it and the accepted forms, then the public total. */
function checkTrustedProxyEntries(entries: readonly string[], ctx: z.RefinementCtx): void {
  const verdicts = entries.map(trustedProxyEntryVerdict);
  const problems = verdicts.flatMap((verdict) => ('problem' in verdict ? [verdict.problem] : []));
  for (const problem of problems.slice(0, TRUST_PROXY_NAMED_REFUSALS)) ctx.addIssue({ code: 'custom', message: `${problem}; ${TRUST_PROXY_FORMS}` });
  if (problems.length > TRUST_PROXY_NAMED_REFUSALS) {
    ctx.addIssue({ code: 'custom', message: `and ${problems.length - TRUST_PROXY_NAMED_REFUSALS} more entries are refused for the same reasons` });
  }
  const publicIpv4 = verdicts.reduce((sum, verdict) => sum + ('publicIpv4' in verdict ? verdict.publicIpv4 : 0), 0);
  if (problems.length === 0 && publicIpv4 > TRUST_PROXY_WIDEST.publicIpv4Addresses) {
    ctx.addIssue({ code: 'custom', message: `the entries together trust ${publicIpv4.toLocaleString('en-US')} public IPv4 addresses, more than `
      + `${TRUST_PROXY_WIDEST.publicIpv4Addresses.toLocaleString('en-US')} (as many as one /10): list only your own proxies' ranges, or use a hop count` });
  }
}

/**
 * Express `trust proxy`, restricted to the forms that cannot be spoofed by the client: a hop count or
 * the addresses/subnets of the proxies in front (never `true`, which trusts any X-Forwarded-For).
 * `false`/`0` trusts nothing (the socket's address is the client's).
 */
const TrustProxy = z
  .union([z.literal(false), z.number().int().nonnegative(), z.array(z.string().trim().min(1)).min(1), z.string().trim().min(1)],
    { error: TRUST_PROXY_MESSAGE })
  // One transform after a permissive union, so a refused entry is reported by itself (a union would
  // answer only its own message when every branch fails).
  .transform((value, ctx): false | number | string[] => {
    if (value === false || typeof value === 'number') return value;
    if (value === 'false') return false;
    if (typeof value === 'string' && /^\d+$/.test(value)) return Number(value);
    if (value === 'true') {
      ctx.addIssue({ code: 'custom', message: TRUST_PROXY_MESSAGE });
      return z.NEVER;
    }
    const entries = typeof value === 'string' ? value.split(',').map((item) => item.trim()).filter(Boolean) : value;
    const before = ctx.issues.length;
    checkTrustedProxyEntries(entries, ctx);
    return ctx.issues.length > before ? z.NEVER : entries;
  });

const PORT_FORM = 'must be a port number (0-65535)';
const Port = z.coerce.number<unknown>({ error: PORT_FORM }).int(PORT_FORM).min(0, PORT_FORM).max(65_535, PORT_FORM);
const Count = z.coerce.number<unknown>({ error: 'must be a whole number' }).int().positive('must be greater than zero');

/**
 * Values published with the sandbox (docs/CONTRACTS.md §1, sandbox/): anyone may know them, so a
 * production proxy must not accept them. Kept here rather than imported: the proxy never imports demo/.
 */
export const PUBLISHED_SANDBOX_VALUES = {
  webhookSecrets: [SANDBOX_DEFAULTS.webhookSecret],
  clientIds: [SANDBOX_DEFAULTS.clientId, 'revoked_client', 'limited_client'],
  clientSecrets: [SANDBOX_DEFAULTS.clientSecret, 'revoked_secret', 'limited_secret'],
} as const;

/** Shortest webhook key (decoded bytes) and API key accepted outside sandbox mode. */
export const MIN_WEBHOOK_KEY_BYTES = 24;
export const MIN_PRODUCTION_API_KEY_LENGTH = 32;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const ConfigFields = z.object({
    /** `{base_url}`: host of the token and verification endpoints. */
    baseUrl: HttpUrl,
    /** `{gateway_url}`: host of the transaction endpoint. Defaults to `baseUrl`. */
    gatewayUrl: HttpUrl.optional(),
    clientId: Text,
    clientSecret: Text,
    tokenScope: Text.default('obv/token-request'),
    /** Scope for the transaction endpoint's token; when unset the verification token is reused. */
    transactionScope: Text.optional(),
    /** The proxy's own public origin (+ optional path prefix), as the provider and browsers reach it. */
    publicUrl: HttpUrl,
    /** Where the router is mounted; part of the per-session return/notification URLs and the WS path. */
    mountPath: z
      .string()
      .regex(/^(\/[A-Za-z0-9._~-]+)*$/, 'must be a path such as /obv (no trailing slash), or empty')
      .default('/obv'),
    /** Standard Webhooks secret (`whsec_…`) shared with the provider. */
    webhookSecret: Text.regex(WEBHOOK_SECRET, WEBHOOK_SECRET_MESSAGE),
    allowedOrigins: OriginList.default([]),
    merchantId: Text,
    /** The shop's name as shoppers know it, shown on the proxy's "Connecting to your bank…" page. */
    merchantName: Text.max(100, 'must be at most 100 characters').optional(),
    /** Custom schemes a hosted page's `completionRedirectUri` may use (POST /link-sessions `hosted`), besides https. */
    hostedRedirectSchemes: RedirectSchemeList.default([]),
    merchantSubId: Text.optional(),
    product: Text.default('ACH'),
    transactionRegion: Text.optional(),
    pgwAppId: Text.optional(),
    pgwClientId: Text.optional(),
    /** Bearer key the merchant's server uses on the server-only routes (id `default`); the routes are off without a key. */
    merchantApiKey: z.string().trim().min(MIN_API_KEY_LENGTH, `must be at least ${MIN_API_KEY_LENGTH} characters`).optional(),
    /** Several keys at once, each with an id logs and metrics name (`id:key,id:key`, or an array): rotation without downtime. */
    merchantApiKeys: MerchantApiKeyList.optional(),
    /** Where merchant events are POSTed (signed, retried); events are off without it. */
    eventsUrl: HttpUrl.optional(),
    /** `whsec_` secrets signing merchant events (comma list); during a rotation every one signs. */
    eventsSecrets: WebhookSecretList.optional(),
    /** `verificationStatus` values that mean success / failure (case-insensitive); anything else is refused. */
    successStatuses: StatusWords.default(['SUCCESS']),
    failureStatuses: StatusWords.default(['FAILURE']),
    /**
     * Endpoint 4's `transactionStatus` values (case-insensitive) of a 2xx answer that mean paid, and that
     * mean declined (nothing charged: the order may be paid again). Any other status of a 2xx answer
     * (a pending or unfamiliar one) leaves the payment `unknown`, for the merchant to reconcile.
     */
    paidTransactionStatuses: StatusWords.default(['APPROVED']),
    declinedTransactionStatuses: StatusWords.default(['DECLINED', 'REJECTED']),
    /** Endpoint 4 error codes that mean "the shopper must re-authorize this account" (docs/UPSTREAM.md D25). */
    reauthorizationCodes: StatusWords.default(['REAUTHORIZATION_REQUIRED']),
    /** Failed /transactions API-key attempts per client address per 15 minutes before 429s; 0 = no limit. */
    authFailureLimit: z.coerce.number<unknown>({ error: 'must be a whole number' }).int().nonnegative().default(10),
    /** As long as the sandbox bank's link (15 min): the checkout never waits on a link that can no longer finish. */
    sessionTtlMs: Duration.default(15 * 60_000),
    /**
     * Keys that seal every stored accountToken (AES-256-GCM): `id:base64` entries, the first seals, all
     * open. Required outside sandbox mode (sandbox mode uses a published key and says so).
     */
    sealingKeys: SealingKeyList.optional(),
    /** How long a link token from POST /link-sessions may start a verification; at most LINK_SESSION_TTL_MAX_MS. */
    linkSessionTtlMs: Duration
      .refine((ms) => ms <= LINK_SESSION_TTL_MAX_MS, `must be at most ${formatDuration(LINK_SESSION_TTL_MAX_MS)} (a link token serves one checkout page)`)
      .default(30 * 60_000),
    /** How long the proxy remembers an order it paid (one payment per order, GET /transactions/{id}). */
    paymentRetentionMs: Duration.default(30 * 24 * 3_600_000),
    upstreamTimeoutMs: Duration.default(10_000),
    /** Allow plain-http upstream URLs (the local sandbox). */
    sandbox: Bool.default(false),
    /**
     * Bind each bank step to the browser that started it (docs/PROXY.md "Security notes"): starts only from
     * pages on publicUrl's origin, successes held back until that browser reaches the return page.
     * Default: on outside sandbox mode.
     */
    bindBankStep: Bool.optional(),
    redisUrl: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }).optional(),
    /** Prefix of every Redis key and of the events channel, so deployments can share one Redis. */
    redisPrefix: z
      .string()
      .regex(/^[A-Za-z0-9:._-]{1,32}$/, 'must be 1-32 characters of letters, digits, ":", ".", "_" or "-" (no spaces)')
      .default(DEFAULT_REDIS_PREFIX),
    /**
     * Where state lives (storage/create-storage.ts): `sqlite` (one instance, the default), `redis` (several;
     * the default when redisUrl is set), `memory` (tests; production refuses it without allowVolatileStorage).
     */
    storage: z.enum(['sqlite', 'redis', 'memory'], { error: 'must be sqlite, redis or memory' }).optional(),
    /** The SQLite storage's directory (created 0700 if missing). */
    dataDir: Text.default(DEFAULT_DATA_DIR),
    /** Outside sandbox mode, `storage: memory` is refused unless this says a restart may lose payments and sessions. */
    allowVolatileStorage: Bool.default(false),
    /** Verification starts per client IP per minute; 0 turns the limit off. */
    rateLimit: z.coerce.number<unknown>({ error: 'must be a whole number' }).int().nonnegative().default(30),
    /** Express `trust proxy` (hop count or addresses/subnets); when unset, the app the router is mounted in decides. */
    trustProxy: TrustProxy.optional(),
    /** WebSockets per session; a new one replaces the oldest. */
    maxSocketsPerSession: Count.default(4),
    /** WebSockets per client address (after `trustProxy`); more are closed with 1013. */
    maxSocketsPerClient: Count.default(64),
    /** WebSockets on this instance; more are closed with 1013. Default 10,000, lowered to fit the file limit. */
    maxSockets: Count.optional(),
    /** http.Server `headersTimeout`: a client must send its headers within this. */
    headersTimeoutMs: Duration.default(10_000),
    /** http.Server `requestTimeout`: a whole request (headers and body) must arrive within this. */
    requestTimeoutMs: Duration.default(30_000),
    /**
     * Public URL of a separate listener for the provider's notifications (npm start: OBV_NOTIFICATION_PORT).
     * When set, notification URLs point there and the browser-facing router no longer serves them.
     */
    notificationPublicUrl: HttpUrl.optional(),
    /** npm start: port of the notification listener (needs notificationPublicUrl). */
    notificationPort: Port.optional(),
    /** npm start: port of the Prometheus /metrics listener; unset = no metrics listener. */
    metricsPort: Port.optional(),
    /** npm start: address the metrics listener binds to; loopback unless you say otherwise. */
    metricsHost: Text.default('127.0.0.1'),
    /** npm start: how long in-flight requests may take to finish after SIGTERM/SIGINT. */
    shutdownTimeoutMs: Duration.default(10_000),
    /**
     * npm start: after SIGTERM/SIGINT, how long /readyz answers 503 while everything else still works, so
     * load balancers stop sending before the listener closes. 0 closes at once.
     */
    drainWindowMs: z.union([z.literal(0), z.literal('0'), Duration], { error: 'must be 0 (close at once) or a duration: 5s, 1500ms, 1m, or a number of seconds' })
      .transform((value) => Number(value))
      .default(5_000),
    /**
     * npm start: the address to listen on; unset = every interface (a container behind a balancer),
     * or 127.0.0.1 in sandbox mode (its published secrets stay on this machine).
     */
    host: Text.optional(),
    logLevel: z.enum(LOG_LEVELS, { error: `must be one of ${LOG_LEVELS.join(', ')}` }).default('info'),
    port: Port.default(3000),
});

export const ProxyConfigSchema = ConfigFields
  .superRefine((config, ctx) => {
    for (const key of ['publicUrl', 'notificationPublicUrl'] as const) {
      const value = config[key];
      if (!value || !URL.canParse(value)) continue;
      const url = new URL(value);
      // The per-session URLs are built by appending to it: a query or fragment would swallow the path.
      if (url.search || url.hash || value.includes('#') || value.includes('?')) {
        ctx.addIssue({ code: 'custom', path: [key], message: 'must not have a query or fragment (the per-session paths are appended to it)' });
      }
      if (url.username || url.password) ctx.addIssue({ code: 'custom', path: [key], message: 'must not contain user:password@' });
    }
    if (config.sandbox !== true) productionGuardrails(config, ctx);
    if (config.merchantApiKey !== undefined && config.merchantApiKeys !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['merchantApiKeys'],
        message: 'is set with OBV_MERCHANT_API_KEY: use one of the two (put that key in the list, e.g. default:<key>)' });
    }
    if ((config.merchantApiKey || config.merchantApiKeys) && (!config.pgwAppId || !config.pgwClientId)) {
      for (const key of ['pgwAppId', 'pgwClientId'] as const) {
        if (!config[key]) ctx.addIssue({ code: 'custom', path: [key], message: 'is required when OBV_MERCHANT_API_KEY(S) enables transactions' });
      }
    }
    if (config.eventsUrl && URL.canParse(config.eventsUrl) && (new URL(config.eventsUrl).username || new URL(config.eventsUrl).password)) {
      // fetch refuses such a URL; the signature is what proves an event is the proxy's.
      ctx.addIssue({ code: 'custom', path: ['eventsUrl'], message: 'must not contain user:password@ (your endpoint checks the signature instead)' });
    }
    if (config.eventsUrl && !config.eventsSecrets) {
      ctx.addIssue({ code: 'custom', path: ['eventsSecrets'], message: 'is required with an events URL (the events are signed with it)' });
    }
    // A link reference lives as long as its session's record; an order must be remembered longer, or the
    // same reference could pay it a second time once the first payment is forgotten.
    const referenceLifeMs = config.sessionTtlMs + RECORD_GRACE_MS + config.upstreamTimeoutMs;
    if (typeof config.paymentRetentionMs === 'number' && typeof config.sessionTtlMs === 'number' && config.paymentRetentionMs < referenceLifeMs) {
      ctx.addIssue({ code: 'custom', path: ['paymentRetentionMs'],
        message: `must be at least the session lifetime + 1 h (${Math.ceil(referenceLifeMs / 3_600_000)}h here), or a link reference could pay its order twice` });
    }
    linkSessionWithinRetention(config, referenceLifeMs, ctx);
    storageChecks(config, ctx);
    if (config.notificationPort !== undefined && !config.notificationPublicUrl) {
      ctx.addIssue({ code: 'custom', path: ['notificationPublicUrl'], message: 'is required with a notification port (it is the URL the provider posts to)' });
    }
  }, {
    // Also when some fields failed: every problem is reported in one round, not the rest after a fix.
    // Fields that failed keep their raw input here, so each check guards the type it reads.
    when: () => true,
  })
  .transform((config) => ({
    ...config,
    gatewayUrl: config.gatewayUrl ?? config.baseUrl,
    bindBankStep: config.bindBankStep ?? !config.sandbox,
    host: config.host ?? (config.sandbox ? '127.0.0.1' : undefined),
    storage: config.storage ?? (config.redisUrl ? 'redis' as const : 'sqlite' as const),
  }));

/**
 * Durable storage unless told otherwise: memory loses every payment, session and event at a restart, so
 * outside sandbox mode it needs OBV_ALLOW_VOLATILE_STORAGE=true; redis needs its URL.
 */
function storageChecks(config: Partial<ConfigFields>, ctx: z.RefinementCtx): void {
  if (config.storage === 'redis' && !config.redisUrl) {
    ctx.addIssue({ code: 'custom', path: ['redisUrl'], message: 'is required with OBV_STORAGE=redis' });
  }
  if ((config.storage === 'sqlite' || config.storage === 'memory') && config.redisUrl) {
    ctx.addIssue({ code: 'custom', path: ['storage'], message: `is ${config.storage} while OBV_REDIS_URL is set: choose one (leave OBV_STORAGE unset to use Redis)` });
  }
  if (config.storage === 'memory' && config.sandbox !== true && config.allowVolatileStorage !== true) {
    ctx.addIssue({ code: 'custom', path: ['storage'],
      message: 'is memory: a restart would lose every payment (an order could be paid twice), session and merchant event. '
        + 'Use sqlite (the default, OBV_DATA_DIR) or redis, or set OBV_ALLOW_VOLATILE_STORAGE=true if you accept that' });
  }
}

type ConfigFields = z.infer<typeof ConfigFields>;

/**
 * A link token starts verifications until its order is paid, and "paid" is the payment record: once the
 * record is forgotten (OBV_PAYMENT_RETENTION), a live link token would start a new verification whose
 * link reference pays the same order again. The last reference a link token can make lives until
 * link-session lifetime + reference life (session lifetime + record grace + upstream time-out) after
 * the link session was made, and the order may be paid at its very start: so that much must lie well
 * inside the retention. Half of it, so shortening the retention later, or instances whose clocks differ,
 * still leave every reference long dead before its payment is forgotten.
 */
function linkSessionWithinRetention(config: ConfigFields, referenceLifeMs: number, ctx: z.RefinementCtx): void {
  const { linkSessionTtlMs, paymentRetentionMs } = config;
  if (typeof linkSessionTtlMs !== 'number' || typeof paymentRetentionMs !== 'number' || !Number.isFinite(referenceLifeMs)) return;
  if (linkSessionTtlMs + referenceLifeMs <= paymentRetentionMs / 2) return;
  const most = paymentRetentionMs / 2 - referenceLifeMs;
  ctx.addIssue({ code: 'custom', path: ['linkSessionTtlMs'],
    message: `must end well inside the payment retention: with the session lifetime + 1 h it may take at most half of OBV_PAYMENT_RETENTION (${
      most > 0 ? `at most ${formatDuration(most)} here` : 'OBV_PAYMENT_RETENTION is too short for any'}), or its order could be paid again once the payment is forgotten` });
}

/** Fewest distinct byte values a random key of MIN_WEBHOOK_KEY_BYTES has, with room to spare (it has ~23). */
const MIN_DISTINCT_KEY_BYTES = 12;

/**
 * Why a webhook secret is unfit for production, if it is: the comparison is on the decoded key, so the
 * sandbox's key with its padding dropped or changed is still the sandbox's key; a short key or one with
 * few distinct bytes (all zeros, one repeated byte, a short pattern) is guessable.
 */
function webhookKeyProblem(secret: string): string | undefined {
  if (!secret.startsWith('whsec_')) return undefined;
  const key = webhookKeyBytes(secret);
  if (PUBLISHED_SANDBOX_VALUES.webhookSecrets.some((published) => webhookKeyBytes(published).equals(key))) return 'is the sandbox\'s published secret';
  if (key.length < MIN_WEBHOOK_KEY_BYTES) return `must decode to at least ${MIN_WEBHOOK_KEY_BYTES} bytes`;
  if (new Set(key).size < MIN_DISTINCT_KEY_BYTES) return `must be random bytes (this key has only ${new Set(key).size} distinct byte values; e.g. whsec_$(openssl rand -base64 32))`;
  return undefined;
}

/** Sandbox mode off: no published sandbox values, no short or patterned secrets, https everywhere. */
function productionGuardrails(config: ConfigFields, ctx: z.RefinementCtx): void {
  const hint = ' (outside sandbox mode; OBV_SANDBOX=true is for the local sandbox only)';
  for (const key of ['baseUrl', 'gatewayUrl', 'publicUrl', 'notificationPublicUrl'] as const) {
    // Refinements run even when a field already failed, so the URL may not parse.
    const value = config[key];
    if (value && URL.canParse(value) && new URL(value).protocol !== 'https:') {
      ctx.addIssue({ code: 'custom', path: [key], message: 'must use https (the provider allows HTTPS only; set OBV_SANDBOX=true for a local http sandbox)' });
    }
  }
  const origins: unknown = config.allowedOrigins;
  (Array.isArray(origins) ? origins as string[] : []).forEach((origin, index) => {
    if (!origin.startsWith('https://')) ctx.addIssue({ code: 'custom', path: ['allowedOrigins', index], message: `${origin} must use https${hint}` });
  });
  const webhookProblem = config.webhookSecret ? webhookKeyProblem(config.webhookSecret) : undefined;
  if (webhookProblem) ctx.addIssue({ code: 'custom', path: ['webhookSecret'], message: `${webhookProblem}${hint}` });
  eventsGuardrails(config, ctx, hint);
  if ((PUBLISHED_SANDBOX_VALUES.clientIds as readonly string[]).includes(config.clientId)) {
    ctx.addIssue({ code: 'custom', path: ['clientId'], message: `is a published sandbox client${hint}` });
  }
  if ((PUBLISHED_SANDBOX_VALUES.clientSecrets as readonly string[]).includes(config.clientSecret)) {
    ctx.addIssue({ code: 'custom', path: ['clientSecret'], message: `is a published sandbox secret${hint}` });
  }
  // Cross-field checks also run when a field failed, so the keys may be anything the input held.
  const sealingKeys: unknown = config.sealingKeys;
  if (sealingKeys === undefined) {
    ctx.addIssue({ code: 'custom', path: ['sealingKeys'],
      message: `is required: the key that seals stored accountTokens, as id:base64 of 32 random bytes${hint}` });
  } else if (Array.isArray(sealingKeys) && sealingKeys.some((key) => Buffer.isBuffer(key?.key) && isSandboxSealingKey(key))) {
    ctx.addIssue({ code: 'custom', path: ['sealingKeys'], message: `holds the sandbox's published key${hint}` });
  }
  for (const { apiKey, path, label } of apiKeysToCheck(config)) {
    if (apiKey.length < MIN_PRODUCTION_API_KEY_LENGTH || new Set(apiKey).size < 10) {
      ctx.addIssue({ code: 'custom', path,
        message: `${label}must be at least ${MIN_PRODUCTION_API_KEY_LENGTH} random characters (e.g. openssl rand -base64 32)${hint}` });
    } else if (unpredictableCharacters(apiKey) < MIN_UNPREDICTABLE_API_KEY_CHARACTERS) {
      ctx.addIssue({ code: 'custom', path,
        message: `${label}must be random characters, not a sequence or a repeated pattern (abcdef…, 0123…, a word said again; e.g. openssl rand -base64 32)${hint}` });
    }
  }
  secretsWithOneRole(config, ctx, hint);
}

/** Each configured API key (the one key, or each of the list) with the path and words its issue names it by. */
function apiKeysToCheck(config: ConfigFields): { apiKey: string; path: (string | number)[]; label: string }[] {
  // Fields that failed keep their raw input here: only what parsed is checked.
  if (typeof config.merchantApiKey === 'string') return [{ apiKey: config.merchantApiKey, path: ['merchantApiKey'], label: '' }];
  const list: unknown = config.merchantApiKeys;
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry: unknown, index) => {
    const { id, key } = (entry ?? {}) as { id?: unknown; key?: unknown };
    return typeof key === 'string' && typeof id === 'string' ? [{ apiKey: key, path: ['merchantApiKeys', index], label: `key ${id} ` }] : [];
  });
}

/**
 * Characters of an API key that its earlier ones do not give away: not the next step of a run with a
 * constant step (aaaa, abcd, 9876, aceg), not the end of four characters seen before (a repeated word
 * or cycle). A random key of 32 base64 or hex characters has 25 or more (in 200,000 draws of hex, the
 * fewest was 25); `abcdefghijklmnopqrstuvwxyz012345` has 4.
 */
function unpredictableCharacters(key: string): number {
  const chars = Array.from(key);
  const codes = chars.map((char) => char.codePointAt(0) ?? 0);
  const seen = new Set<string>();
  let count = 0;
  for (let i = 0; i < chars.length; i++) {
    const stepping = i >= 2 && codes[i]! - codes[i - 1]! === codes[i - 1]! - codes[i - 2]!;
    const gram = i >= 3 ? chars.slice(i - 3, i + 1).join('') : undefined;
    const repeating = gram !== undefined && seen.has(gram);
    if (gram !== undefined) seen.add(gram);
    if (!stepping && !repeating) count++;
  }
  return count;
}
/** Fewest unpredictable characters an API key must have outside sandbox mode (about 120 bits of base64). */
const MIN_UNPREDICTABLE_API_KEY_CHARACTERS = 20;

/** What a secret is, compared across roles: its text, and the bytes it decodes to (base64, after `whsec_` or `id:`). */
function secretMaterial(secret: string): string[] {
  const material = [Buffer.from(secret, 'utf8').toString('hex')];
  const encoded = secret.replace(/^whsec_/, '').replace(/^[A-Za-z0-9_-]{1,32}:/, '');
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(encoded)) {
    const bytes = Buffer.from(encoded.replace(/-/g, '+').replace(/_/g, '/'), 'base64');
    if (bytes.length >= 16) material.push(bytes.toString('hex'));
  }
  return material;
}

/**
 * Why each role's holder must not learn another's secret, by the role reused (the one the issue is on).
 * Ordered by what the secret opens: a reuse is reported on the later of the two.
 */
const SECRET_ROLES = [
  { key: 'clientSecret', why: 'could obtain the proxy\'s bearer tokens' },
  { key: 'webhookSecret', why: 'could sign provider notifications' },
  { key: 'eventsSecrets', why: 'could sign merchant events' },
  { key: 'merchantApiKey', why: 'could make link sessions and pay with any link reference' },
  { key: 'sealingKeys', why: 'could open every stored accountToken and saved account' },
] as const;

/**
 * Outside sandbox mode each secret has one role: the sealing keys, the provider's webhook secret, the
 * events secrets, the API key and the client secret all differ (compared as text and as decoded bytes).
 * The merchant's webhook code holds the events secrets, the provider the webhook secret: a sealing key
 * equal to either hands them every saved account. (An events secret equal to the webhook secret is
 * refused by eventsGuardrails, with its own words.)
 */
function secretsWithOneRole(config: ConfigFields, ctx: z.RefinementCtx, hint: string): void {
  const held: { role: number; label: string; index?: number; material: string[]; key?: string }[] = [];
  const text = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
  const add = (role: number, label: string, material: string[], index?: number, key?: string) => held.push({ role, label, material, index, key });
  const clientSecret = text(config.clientSecret);
  if (clientSecret) add(0, '', secretMaterial(clientSecret));
  const webhookSecret = text(config.webhookSecret);
  if (webhookSecret) add(1, '', secretMaterial(webhookSecret));
  const events: unknown = config.eventsSecrets;
  if (Array.isArray(events)) events.forEach((secret: unknown, index) => text(secret) && add(2, '', secretMaterial(secret as string), index));
  for (const { apiKey, label, path } of apiKeysToCheck(config)) add(3, label, secretMaterial(apiKey), path[1] as number | undefined, String(path[0]));
  const sealing: unknown = config.sealingKeys;
  if (Array.isArray(sealing)) {
    sealing.forEach((entry: unknown) => {
      const { id, key } = (entry ?? {}) as { id?: unknown; key?: unknown };
      if (Buffer.isBuffer(key)) add(4, `key ${String(id)} `, [key.toString('hex')]);
    });
  }
  const reported = new Set<string>();
  for (const mine of held) {
    for (const other of held) {
      if (other.role >= mine.role || (other.role === 1 && mine.role === 2)) continue;
      if (!mine.material.some((item) => other.material.includes(item))) continue;
      const role = SECRET_ROLES[mine.role]!;
      const otherKey = other.key ?? SECRET_ROLES[other.role]!.key;
      const otherName = KEY_TO_ENV.get(otherKey) ?? otherKey;
      const once = `${mine.role}:${mine.label}:${mine.index ?? ''}:${other.role}`;
      if (reported.has(once)) continue;
      reported.add(once);
      const key = mine.key ?? role.key;
      ctx.addIssue({ code: 'custom', path: mine.index === undefined ? [key] : [key, mine.index],
        message: `${mine.label}is the same secret as ${otherName}: whoever holds that one ${role.why}; give each role a secret of its own${hint}` });
    }
  }
}

/**
 * The events URL over https; each events secret long, unpublished, and not the provider's webhook secret
 * (whoever holds that one could then sign provider notifications, and the provider merchant events).
 */
function eventsGuardrails(config: ConfigFields, ctx: z.RefinementCtx, hint: string): void {
  const url = config.eventsUrl;
  if (url && URL.canParse(url) && new URL(url).protocol !== 'https:') {
    ctx.addIssue({ code: 'custom', path: ['eventsUrl'], message: `must use https (events carry order details)${hint}` });
  }
  (config.eventsSecrets ?? []).forEach((secret, index) => {
    const path = ['eventsSecrets', index];
    const keyProblem = webhookKeyProblem(secret);
    if (keyProblem) {
      ctx.addIssue({ code: 'custom', path, message: `${keyProblem}${hint}` });
    } else if (config.webhookSecret?.startsWith('whsec_') && webhookKeyBytes(secret).equals(webhookKeyBytes(config.webhookSecret))) {
      ctx.addIssue({ code: 'custom', path, message: `must differ from OBV_WEBHOOK_SECRET (the provider's secret must not sign merchant events)${hint}` });
    }
  });
}

/** What `createObvProxy` accepts (before defaults). */
export type ProxyConfigInput = z.input<typeof ProxyConfigSchema>;
/** The validated configuration, defaults applied. */
export type ProxyConfig = z.output<typeof ProxyConfigSchema>;

/** Environment variable → config key. docs/PROXY.md's configuration table lists the same names. */
export const ENV_VARIABLES = {
  OBV_BASE_URL: 'baseUrl',
  OBV_GATEWAY_URL: 'gatewayUrl',
  OBV_CLIENT_ID: 'clientId',
  OBV_CLIENT_SECRET: 'clientSecret',
  OBV_TOKEN_SCOPE: 'tokenScope',
  OBV_TRANSACTION_SCOPE: 'transactionScope',
  OBV_PUBLIC_URL: 'publicUrl',
  OBV_MOUNT_PATH: 'mountPath',
  OBV_WEBHOOK_SECRET: 'webhookSecret',
  OBV_ALLOWED_ORIGINS: 'allowedOrigins',
  OBV_MERCHANT_ID: 'merchantId',
  OBV_MERCHANT_SUB_ID: 'merchantSubId',
  OBV_HOSTED_REDIRECT_SCHEMES: 'hostedRedirectSchemes',
  OBV_MERCHANT_NAME: 'merchantName',
  OBV_PRODUCT: 'product',
  OBV_TRANSACTION_REGION: 'transactionRegion',
  OBV_PGW_APP_ID: 'pgwAppId',
  OBV_PGW_CLIENT_ID: 'pgwClientId',
  OBV_MERCHANT_API_KEY: 'merchantApiKey',
  OBV_MERCHANT_API_KEYS: 'merchantApiKeys',
  OBV_EVENTS_URL: 'eventsUrl',
  OBV_EVENTS_SECRETS: 'eventsSecrets',
  OBV_SUCCESS_STATUSES: 'successStatuses',
  OBV_FAILURE_STATUSES: 'failureStatuses',
  OBV_PAID_TRANSACTION_STATUSES: 'paidTransactionStatuses',
  OBV_DECLINED_TRANSACTION_STATUSES: 'declinedTransactionStatuses',
  OBV_REAUTHORIZATION_CODES: 'reauthorizationCodes',
  OBV_SESSION_TTL: 'sessionTtlMs',
  OBV_SEALING_KEYS: 'sealingKeys',
  OBV_LINK_SESSION_TTL: 'linkSessionTtlMs',
  OBV_PAYMENT_RETENTION: 'paymentRetentionMs',
  OBV_UPSTREAM_TIMEOUT: 'upstreamTimeoutMs',
  OBV_SANDBOX: 'sandbox',
  OBV_BIND_BANK_STEP: 'bindBankStep',
  OBV_REDIS_URL: 'redisUrl',
  OBV_REDIS_PREFIX: 'redisPrefix',
  OBV_STORAGE: 'storage',
  OBV_DATA_DIR: 'dataDir',
  OBV_ALLOW_VOLATILE_STORAGE: 'allowVolatileStorage',
  OBV_RATE_LIMIT: 'rateLimit',
  OBV_TRUST_PROXY: 'trustProxy',
  OBV_AUTH_FAILURE_LIMIT: 'authFailureLimit',
  OBV_WS_MAX_PER_SESSION: 'maxSocketsPerSession',
  OBV_WS_MAX_PER_CLIENT: 'maxSocketsPerClient',
  OBV_WS_MAX_TOTAL: 'maxSockets',
  OBV_HEADERS_TIMEOUT: 'headersTimeoutMs',
  OBV_REQUEST_TIMEOUT: 'requestTimeoutMs',
  OBV_NOTIFICATION_PUBLIC_URL: 'notificationPublicUrl',
  OBV_NOTIFICATION_PORT: 'notificationPort',
  OBV_METRICS_PORT: 'metricsPort',
  OBV_METRICS_HOST: 'metricsHost',
  OBV_SHUTDOWN_TIMEOUT: 'shutdownTimeoutMs',
  OBV_DRAIN_WINDOW: 'drainWindowMs',
  OBV_LOG_LEVEL: 'logLevel',
  HOST: 'host',
  PORT: 'port',
} as const satisfies Record<string, keyof ProxyConfigInput>;

const KEY_TO_ENV = new Map<string, string>(Object.entries(ENV_VARIABLES).map(([env, key]) => [key, env]));

/** Thrown for an invalid configuration; the message lists every bad setting, one per line. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(readonly issues: { setting: string; message: string }[]) {
    super(`Invalid obv-link proxy configuration:\n${issues.map((issue) => `  - ${issue.setting}: ${issue.message}`).join('\n')}`);
  }
}

type ConfigIssue = { setting: string; message: string };

/**
 * Every problem of one parse, named. The cross-field checks run even over fields that failed; a field
 * whose own value was refused gets only that message, not a second one about the same value.
 */
function issuesOf(error: z.ZodError, prepared: object, input: object, name: (key: string) => string): ConfigIssue[] {
  const fieldIssues = ConfigFields.safeParse(prepared).error?.issues ?? [];
  const fieldKeys = new Set(fieldIssues.map((issue) => String(issue.path[0])));
  const isFieldIssue = (issue: z.core.$ZodIssue) => fieldIssues.some((own) => own.message === issue.message && String(own.path) === String(issue.path));
  return error.issues
    .filter((issue) => isFieldIssue(issue) || !fieldKeys.has(String(issue.path[0])))
    .map((issue) => {
      const key = String(issue.path[0] ?? '(config)');
      // A missing value fails its type check; a custom check on it (OBV_PGW_APP_ID with an API key) says why it is needed.
      const missing = issue.code !== 'custom' && issue.path.length === 1 && (input as Record<string, unknown>)[key] === undefined;
      const message = missing ? 'is required' : issue.message;
      return { setting: name(key), message };
    });
}

function fail(error: z.ZodError, prepared: object, input: object, name: (key: string) => string): never {
  throw new ConfigError(issuesOf(error, prepared, input, name));
}

/** Validates a config object (code use). Throws ConfigError naming each bad key. */
export function parseProxyConfig(input: ProxyConfigInput): ProxyConfig {
  const prepared = withSandboxDefaults(input);
  const result = ProxyConfigSchema.safeParse(prepared);
  if (!result.success) fail(result.error, prepared, input, (key) => key);
  return result.data;
}

/** Reads the configuration from environment variables. Throws ConfigError naming each bad variable. */
export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ProxyConfig {
  const input: Record<string, string> = {};
  for (const [name, key] of Object.entries(ENV_VARIABLES)) {
    const value = env[name];
    if (value !== undefined && value.trim() !== '') input[key] = value;
  }
  const prepared = withSandboxDefaults(input);
  const result = ProxyConfigSchema.safeParse(prepared);
  const unknown = unknownVariables(env, Object.keys(ENV_VARIABLES));
  const issues = result.success ? [] : issuesOf(result.error, prepared, input, (key) => KEY_TO_ENV.get(key) ?? key);
  if (unknown.length > 0 || !result.success) throw new ConfigError([...issues, ...unknown]);
  return result.data;
}
