// OBV_TRUST_PROXY: which hops' X-Forwarded-For the proxy believes (Express's `trust proxy`), restricted to
// forms a client cannot use to choose its own address, and never wide enough to trust the internet.
import { BlockList, isIP, isIPv4, SocketAddress } from 'node:net';
import proxyAddr from 'proxy-addr';
import { z } from 'zod';
import { commaList } from './fields.ts';

/** Named subnets proxy-addr (Express's `trust proxy`) knows. */
const NAMED_SUBNETS = new Set(['loopback', 'linklocal', 'uniquelocal']);

/** The prefix length a dotted IPv4 netmask stands for; undefined when its one-bits are not contiguous. */
function netmaskPrefix(mask: string): number | undefined {
  const bits = mask
    .split('.')
    .map((octet) => Number(octet).toString(2).padStart(8, '0'))
    .join('');
  return /^1*0*$/.test(bits) ? (bits.indexOf('0') === -1 ? 32 : bits.indexOf('0')) : undefined;
}

/**
 * How wide a trusted range may be (docs/PROXY.md "Security notes"). A trusted range is one whose clients may
 * choose their address with X-Forwarded-For, so none may cover public address space broadly:
 * - IPv4 inside a private, loopback, link-local or CGNAT range (INTERNAL_IPV4): as wide as that range;
 * - public IPv4: /12 or narrower each (a CDN publishes ranges up to /13), and at most
 *   `publicIpv4Addresses` in all (as many as one /10; Cloudflare's whole list is about 1.5 million), so
 *   the internet cannot be trusted in pieces either;
 * - IPv6: /32 or narrower, unless it lies inside fc00::/7 (unique local) or fe80::/10 (link-local), and
 *   public ones as much as `publicIpv6Slash32s` /32s in all (a CDN publishes about a dozen);
 * - IPv4-mapped IPv6 (::ffff:a.b.c.d/n, which also matches IPv4 clients): judged as IPv4 /(n − 96).
 */
export const TRUST_PROXY_WIDEST = {
  publicIpv4: 12,
  ipv6: 32,
  publicIpv4Addresses: 2 ** 22,
  publicIpv6Slash32s: 64,
} as const;
/**
 * The longest chain of proxies a hop count may name, and the most entries a list may hold. A hop count
 * larger than the real chain trusts entries the client wrote itself (OBV_TRUST_PROXY=1000 lets every
 * client choose its address), and no deployment has more than a few hops; a list of thousands of entries
 * is a copy of someone's address plan, not the proxies in front of this one (a CDN publishes a few dozen).
 */
export const TRUST_PROXY_MAX_HOPS = 5;
export const TRUST_PROXY_MAX_ENTRIES = 256;
/** A one-range BlockList, for "is this address inside". */
function range(network: string, prefix: number, family: 'ipv4' | 'ipv6'): BlockList {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return list;
}
const ipv6Range = (network: string, prefix: number) => range(network, prefix, 'ipv6');
/** IPv4 ranges that are not public: 10/8, 172.16/12, 192.168/16 (RFC 1918), loopback, link-local, CGNAT (RFC 6598). */
const INTERNAL_IPV4 = (
  [
    ['10.0.0.0', 8],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['100.64.0.0', 10],
  ] as const
).map(([network, prefix]) => ({ range: range(network, prefix, 'ipv4'), prefix }));
/** IPv6 ranges that are not public: a range inside one of them may be as wide as the range itself. */
const LOCAL_IPV6 = [
  { range: ipv6Range('fc00::', 7), prefix: 7 },
  { range: ipv6Range('fe80::', 10), prefix: 10 },
];
const MAPPED_IPV4 = ipv6Range('::ffff:0:0', 96);

/**
 * What a range is: too wide to trust (why), or how many public IPv4 addresses it trusts (and, for a public
 * IPv6 range, how many /32s: a fraction for a narrower one).
 */
type RangeVerdict = { problem: string } | { publicIpv4: number; publicIpv6?: number };

/** An IPv4 range (the address may be any inside it): internal ranges pass, a public one is counted. */
function ipv4Verdict(shown: string, address: string, prefix: number): RangeVerdict {
  if (INTERNAL_IPV4.some((inside) => prefix >= inside.prefix && inside.range.check(address, 'ipv4')))
    return { publicIpv4: 0 };
  if (prefix < TRUST_PROXY_WIDEST.publicIpv4) {
    return {
      problem: `${shown} covers public address space broadly (a public IPv4 range wider than /${TRUST_PROXY_WIDEST.publicIpv4})`,
    };
  }
  return { publicIpv4: 2 ** (32 - prefix) };
}

/** The verdict on `shown` (the entry as written), the range `address`/`prefix`. */
function rangeVerdict(shown: string, address: string, family: 4 | 6, prefix: number): RangeVerdict {
  if (family === 4) return ipv4Verdict(shown, address, prefix);
  if (prefix <= 96 && ipv6Range(address, prefix).check('::ffff:0:0', 'ipv6'))
    return { problem: `${shown} covers every IPv4 address (as ::ffff:0:0/96)` };
  if (MAPPED_IPV4.check(address, 'ipv6')) {
    // Any spelling (::ffff:8.0.0.0, ::ffff:800:0, 0:0:0:0:0:ffff:…) in node:net's one form, then as IPv4.
    const ipv4 = new SocketAddress({ address, family: 'ipv6' }).address.slice('::ffff:'.length);
    return ipv4Verdict(shown, ipv4, prefix - 96);
  }
  const local = LOCAL_IPV6.some((inside) => prefix >= inside.prefix && inside.range.check(address, 'ipv6'));
  if (local) return { publicIpv4: 0 };
  if (prefix >= TRUST_PROXY_WIDEST.ipv6) return { publicIpv4: 0, publicIpv6: 2 ** (TRUST_PROXY_WIDEST.ipv6 - prefix) };
  return {
    problem: `${shown} covers public address space broadly (wider than /${TRUST_PROXY_WIDEST.ipv6} outside fc00::/7 and fe80::/10)`,
  };
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
  const malformed = {
    problem: `${entry} is not an address, address/prefix, IPv4 address/netmask or loopback, linklocal, uniquelocal`,
  };
  if (family === 0 || extra.length > 0) return malformed;
  let prefix: number | undefined = written === undefined ? (family === 4 ? 32 : 128) : undefined;
  if (written !== undefined && /^\d{1,3}$/.test(written))
    prefix = Number(written) <= (family === 4 ? 32 : 128) ? Number(written) : undefined;
  else if (written !== undefined && family === 4 && isIPv4(written)) prefix = netmaskPrefix(written);
  if (prefix === undefined) return malformed;
  const verdict = rangeVerdict(entry, address, family as 4 | 6, prefix);
  return 'problem' in verdict || proxyAddrReads(entry) ? verdict : malformed;
}

const TRUST_PROXY_MESSAGE =
  'must be a hop count (1 = one load balancer) or a comma list of proxy addresses/subnets ' +
  '(e.g. 10.0.0.0/8, loopback); `true` would let any client choose its own address with X-Forwarded-For';
/** The accepted forms, for a refused entry (docs/PROXY.md "Security notes" says why). */
const TRUST_PROXY_FORMS =
  `accepted: a hop count up to ${TRUST_PROXY_MAX_HOPS}, or a comma list of at most ${TRUST_PROXY_MAX_ENTRIES} addresses, private subnets` +
  ' (inside 10.0.0.0/8, 172.16.0.0/12, ' +
  `192.168.0.0/16, 127.0.0.0/8, 169.254.0.0/16, 100.64.0.0/10), public IPv4 subnets of /${TRUST_PROXY_WIDEST.publicIpv4} or narrower ` +
  `(${TRUST_PROXY_WIDEST.publicIpv4Addresses.toLocaleString('en-US')} public addresses in all), IPv6 subnets of /${TRUST_PROXY_WIDEST.ipv6} ` +
  'or narrower (wider only inside fc00::/7 or fe80::/10), loopback, linklocal, uniquelocal';
/** Refused entries named one by one; past this many, the rest are counted. */
const TRUST_PROXY_NAMED_REFUSALS = 5;

/** Adds one issue per refused entry (the first few), naming it and the accepted forms, then the public totals. */
function checkTrustedProxyEntries(entries: readonly string[], ctx: z.RefinementCtx): void {
  if (entries.length > TRUST_PROXY_MAX_ENTRIES) {
    ctx.addIssue({
      code: 'custom',
      message:
        `lists ${entries.length.toLocaleString('en-US')} entries, more than ${TRUST_PROXY_MAX_ENTRIES}: ` +
        'list only the proxies in front of this one (their addresses or your own subnets), or use a hop count',
    });
    return;
  }
  const verdicts = entries.map(trustedProxyEntryVerdict);
  const problems = verdicts.flatMap((verdict) => ('problem' in verdict ? [verdict.problem] : []));
  for (const problem of problems.slice(0, TRUST_PROXY_NAMED_REFUSALS))
    ctx.addIssue({ code: 'custom', message: `${problem}; ${TRUST_PROXY_FORMS}` });
  if (problems.length > TRUST_PROXY_NAMED_REFUSALS) {
    ctx.addIssue({
      code: 'custom',
      message: `and ${problems.length - TRUST_PROXY_NAMED_REFUSALS} more entries are refused for the same reasons`,
    });
  }
  const publicIpv4 = verdicts.reduce((sum, verdict) => sum + ('publicIpv4' in verdict ? verdict.publicIpv4 : 0), 0);
  if (problems.length === 0 && publicIpv4 > TRUST_PROXY_WIDEST.publicIpv4Addresses) {
    ctx.addIssue({
      code: 'custom',
      message:
        `the entries together trust ${publicIpv4.toLocaleString('en-US')} public IPv4 addresses, more than ` +
        `${TRUST_PROXY_WIDEST.publicIpv4Addresses.toLocaleString('en-US')} (as many as one /10): list only your own proxies' ranges, or use a hop count`,
    });
  }
  const publicIpv6 = verdicts.reduce(
    (sum, verdict) => sum + ('publicIpv6' in verdict ? (verdict.publicIpv6 ?? 0) : 0),
    0,
  );
  if (problems.length === 0 && publicIpv6 > TRUST_PROXY_WIDEST.publicIpv6Slash32s) {
    ctx.addIssue({
      code: 'custom',
      message:
        `the entries together trust as much public IPv6 space as ${Math.ceil(publicIpv6).toLocaleString('en-US')} /32s, more than ` +
        `${TRUST_PROXY_WIDEST.publicIpv6Slash32s} (as much as one /26): list only your own proxies' ranges, or use a hop count`,
    });
  }
}

/**
 * Express `trust proxy`, restricted to the forms that cannot be spoofed by the client: a hop count or
 * the addresses/subnets of the proxies in front (never `true`, which trusts any X-Forwarded-For).
 * `false`/`0` trusts nothing (the socket's address is the client's).
 */
export const TrustProxy = z
  .union(
    [
      z.literal(false),
      z.number().int().nonnegative(),
      z.array(z.string().trim().min(1)).min(1),
      z.string().trim().min(1),
    ],
    { error: TRUST_PROXY_MESSAGE },
  )
  // One transform after a permissive union, so a refused entry is reported by itself (a union would
  // answer only its own message when every branch fails).
  .transform((value, ctx): false | number | string[] => {
    if (value === false) return value;
    if (value === 'false') return false;
    if (typeof value === 'number' || (typeof value === 'string' && /^\d+$/.test(value))) {
      const hops = Number(value);
      if (hops <= TRUST_PROXY_MAX_HOPS) return hops;
      ctx.addIssue({
        code: 'custom',
        message:
          `${hops} hops is more than any chain of proxies (at most ${TRUST_PROXY_MAX_HOPS}): a hop count larger than the ` +
          'proxies in front of this one trusts X-Forwarded-For entries the client wrote, so any client chooses its own address; count your proxies',
      });
      return z.NEVER;
    }
    if (value === 'true') {
      ctx.addIssue({ code: 'custom', message: TRUST_PROXY_MESSAGE });
      return z.NEVER;
    }
    const entries = typeof value === 'string' ? commaList(value) : value;
    const before = ctx.issues.length;
    checkTrustedProxyEntries(entries, ctx);
    return ctx.issues.length > before ? z.NEVER : entries;
  });
