// Outside sandbox mode, a valid configuration must also be safe: no value the sandbox publishes, no short,
// patterned or reused secret, https everywhere. Each refusal names the setting and says why.
import type { z } from 'zod';
import { SANDBOX_DEFAULTS } from './sandbox-defaults.ts';
import { isSandboxSealingKey } from './sealing-keys.ts';
import { webhookKeyBytes } from './webhook-keys.ts';
import { envName } from './env.ts';
import type { ConfigFields } from './settings.ts';

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

/**
 * Fewest distinct characters an API key must have. Low on purpose: 32 hex characters of
 * `openssl rand -hex 16` have fewer than 10 distinct ones about once in 10,000 keys (measured: 2,000,000
 * draws, fewest 8), and fewer than 6 about once in 10^12. Patterns with more are caught by
 * unpredictableCharacters below.
 */
const MIN_DISTINCT_API_KEY_CHARACTERS = 6;

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
  if (PUBLISHED_SANDBOX_VALUES.webhookSecrets.some((published) => webhookKeyBytes(published).equals(key)))
    return "is the sandbox's published secret";
  if (key.length < MIN_WEBHOOK_KEY_BYTES) return `must decode to at least ${MIN_WEBHOOK_KEY_BYTES} bytes`;
  if (new Set(key).size < MIN_DISTINCT_KEY_BYTES)
    return `must be random bytes (this key has only ${new Set(key).size} distinct byte values; e.g. whsec_$(openssl rand -base64 32))`;
  return undefined;
}

/** Sandbox mode off: no published sandbox values, no short or patterned secrets, https everywhere. */
export function productionGuardrails(config: ConfigFields, ctx: z.RefinementCtx): void {
  const hint = ' (outside sandbox mode; OBV_SANDBOX=true is for the local sandbox only)';
  for (const key of ['baseUrl', 'gatewayUrl', 'publicUrl', 'notificationPublicUrl'] as const) {
    // Refinements run even when a field already failed, so the URL may not parse.
    const value = config[key];
    if (value && URL.canParse(value) && new URL(value).protocol !== 'https:') {
      ctx.addIssue({
        code: 'custom',
        path: [key],
        message: 'must use https (the provider allows HTTPS only; set OBV_SANDBOX=true for a local http sandbox)',
      });
    }
  }
  const origins: unknown = config.allowedOrigins;
  (Array.isArray(origins) ? (origins as string[]) : []).forEach((origin, index) => {
    if (!origin.startsWith('https://'))
      ctx.addIssue({ code: 'custom', path: ['allowedOrigins', index], message: `${origin} must use https${hint}` });
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
    ctx.addIssue({
      code: 'custom',
      path: ['sealingKeys'],
      message: `is required: the key that seals stored accountTokens, as id:base64 of 32 random bytes${hint}`,
    });
  } else if (
    Array.isArray(sealingKeys) &&
    sealingKeys.some((key) => Buffer.isBuffer(key?.key) && isSandboxSealingKey(key))
  ) {
    ctx.addIssue({ code: 'custom', path: ['sealingKeys'], message: `holds the sandbox's published key${hint}` });
  }
  for (const { apiKey, path, label } of apiKeysToCheck(config)) {
    if (apiKey.length < MIN_PRODUCTION_API_KEY_LENGTH || new Set(apiKey).size < MIN_DISTINCT_API_KEY_CHARACTERS) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: `${label}must be at least ${MIN_PRODUCTION_API_KEY_LENGTH} random characters (e.g. openssl rand -base64 32)${hint}`,
      });
    } else if (unpredictableCharacters(apiKey) < MIN_UNPREDICTABLE_API_KEY_CHARACTERS) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: `${label}must be random characters, not a sequence or a repeated pattern (abcdef…, 0123…, a word said again; e.g. openssl rand -base64 32)${hint}`,
      });
    }
  }
  secretsWithOneRole(config, ctx, hint);
}

/** Each configured API key (the one key, or each of the list) with the path and words its issue names it by. */
function apiKeysToCheck(config: ConfigFields): { apiKey: string; path: (string | number)[]; label: string }[] {
  // Fields that failed keep their raw input here: only what parsed is checked.
  if (typeof config.merchantApiKey === 'string')
    return [{ apiKey: config.merchantApiKey, path: ['merchantApiKey'], label: '' }];
  const list: unknown = config.merchantApiKeys;
  if (!Array.isArray(list)) return [];
  return list.flatMap((entry: unknown, index) => {
    const { id, key } = (entry ?? {}) as { id?: unknown; key?: unknown };
    return typeof key === 'string' && typeof id === 'string'
      ? [{ apiKey: key, path: ['merchantApiKeys', index], label: `key ${id} ` }]
      : [];
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

/**
 * What a secret is, compared across roles: its text, and the bytes it decodes to after `whsec_` or `id:`
 * — as hex (either case: `openssl rand -hex 32` is how many write a key) and as base64 or base64url, with or
 * without padding — so a sealing key pasted as the API key is caught in whichever form it was written.
 */
function secretMaterial(secret: string): string[] {
  const material = [Buffer.from(secret, 'utf8').toString('hex')];
  const encoded = secret.replace(/^whsec_/, '').replace(/^[A-Za-z0-9_-]{1,32}:/, '');
  if (/^(?:[0-9a-fA-F]{2}){16,}$/.test(encoded)) material.push(encoded.toLowerCase());
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
  { key: 'clientSecret', why: "could obtain the proxy's bearer tokens" },
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
  const add = (role: number, label: string, material: string[], index?: number, key?: string) =>
    held.push({ role, label, material, index, key });
  const clientSecret = text(config.clientSecret);
  if (clientSecret) add(0, '', secretMaterial(clientSecret));
  const webhookSecret = text(config.webhookSecret);
  if (webhookSecret) add(1, '', secretMaterial(webhookSecret));
  const events: unknown = config.eventsSecrets;
  if (Array.isArray(events))
    events.forEach((secret: unknown, index) => text(secret) && add(2, '', secretMaterial(secret as string), index));
  for (const { apiKey, label, path } of apiKeysToCheck(config))
    add(3, label, secretMaterial(apiKey), path[1] as number | undefined, String(path[0]));
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
      const otherName = envName(otherKey);
      const once = `${mine.role}:${mine.label}:${mine.index ?? ''}:${other.role}`;
      if (reported.has(once)) continue;
      reported.add(once);
      const key = mine.key ?? role.key;
      ctx.addIssue({
        code: 'custom',
        path: mine.index === undefined ? [key] : [key, mine.index],
        message: `${mine.label}is the same secret as ${otherName}: whoever holds that one ${role.why}; give each role a secret of its own${hint}`,
      });
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
    ctx.addIssue({
      code: 'custom',
      path: ['eventsUrl'],
      message: `must use https (events carry order details)${hint}`,
    });
  }
  (config.eventsSecrets ?? []).forEach((secret, index) => {
    const path = ['eventsSecrets', index];
    const keyProblem = webhookKeyProblem(secret);
    if (keyProblem) {
      ctx.addIssue({ code: 'custom', path, message: `${keyProblem}${hint}` });
    } else if (
      config.webhookSecret?.startsWith('whsec_') &&
      webhookKeyBytes(secret).equals(webhookKeyBytes(config.webhookSecret))
    ) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: `must differ from OBV_WEBHOOK_SECRET (the provider's secret must not sign merchant events)${hint}`,
      });
    }
  });
}
