// The forms a setting's value may take, shared by the settings (settings.ts): durations, true/false,
// URLs and origins, comma lists, ports and counts. Each refuses what it cannot read with the words the
// operator sees next to the variable's name.
import { z } from 'zod';

const DURATION = /^(\d+)(ms|s|m|h)?$/;
const DURATION_FORMS = 'must be a duration greater than zero: 30m, 90s, 1500ms, 2h, or a number of seconds';
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;

/** Milliseconds as the duration forms read them back: `18h 44m 50s`, `30m`, `1500ms`. */
export function formatDuration(ms: number): string {
  const parts = [
    [Math.floor(ms / UNIT_MS.h), 'h'],
    [Math.floor(ms / UNIT_MS.m) % 60, 'm'],
    [Math.floor(ms / UNIT_MS.s) % 60, 's'],
    [ms % 1000, 'ms'],
  ] as const;
  return (
    parts
      .filter(([amount]) => amount > 0)
      .map(([amount, unit]) => `${amount}${unit}`)
      .join(' ') || '0s'
  );
}

/** "30m", "90s", "1500ms", "2h", or a bare number of seconds → milliseconds. Numbers are taken as ms. */
export const Duration = z.union(
  [
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
  ],
  { error: DURATION_FORMS },
);

/** Exactly `true` or `false`: `1`, `yes` or `TRUE` are refused rather than guessed (they once meant sandbox mode). */
export const Bool = z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')], {
  error: 'must be true or false',
});

export const HttpUrl = z.url({
  protocol: /^https?$/,
  error: 'must be an absolute http(s) URL such as https://shop.example',
});

export const Origin = z
  .string()
  .trim()
  .pipe(HttpUrl)
  // Checks run on a value the URL check refused too (a format issue does not abort): guard the parse.
  .refine(
    (value) => !URL.canParse(value) || new URL(value).origin === value.replace(/\/$/, ''),
    'must be an origin (scheme://host[:port]) without a path',
  )
  .transform((value) => new URL(value).origin);

/** The entries of a comma list (`a, b,,c` → `a`, `b`, `c`): each trimmed, empty ones dropped. */
export function commaList(value: string): string[] {
  return value
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);
}

export const OriginList = z.union([z.array(Origin), z.string().transform(commaList).pipe(z.array(Origin))], {
  error: 'must be a comma list of origins such as https://shop.example, https://www.shop.example',
});

export const Text = z.string().trim().min(1, 'must not be empty');

const HOST_PORT = 'must be a comma list of host:port, such as sentinel-1:26379, sentinel-2:26379';
const HostPort = z
  .string()
  .regex(/^[A-Za-z0-9.-]+:\d{1,5}$|^\[[0-9A-Fa-f:]+\]:\d{1,5}$/, HOST_PORT)
  .transform((value) => {
    const at = value.lastIndexOf(':');
    return { host: value.slice(0, at).replace(/^\[|\]$/g, ''), port: Number(value.slice(at + 1)) };
  })
  .pipe(z.object({ host: z.string().min(1), port: z.number().int().min(1, HOST_PORT).max(65_535, HOST_PORT) }));

/** `host:port,host:port` (or already a list of `{ host, port }`): Redis Sentinel's addresses. */
export const HostPortList = z.union(
  [
    z.array(z.object({ host: z.string().min(1), port: z.number().int().min(1).max(65_535) })),
    z.string().transform(commaList).pipe(z.array(HostPort).min(1, HOST_PORT)),
  ],
  { error: HOST_PORT },
);

/**
 * Schemes a hosted page may send the shopper back to (an app's own, `myapp` or `com.shop.app`): never one
 * that runs or reads something in the browser, nor http(s) (https is always allowed, http never outside
 * sandbox loopback: link-sessions/hosted.ts).
 */
const REFUSED_SCHEMES = new Set([
  'http',
  'https',
  'javascript',
  'data',
  'file',
  'blob',
  'about',
  'vbscript',
  'filesystem',
  'ws',
  'wss',
  'ftp',
  'intent',
  'chrome',
  'view-source',
]);
const RedirectScheme = z
  .string()
  .trim()
  .toLowerCase()
  .regex(
    /^[a-z][a-z0-9+.-]{0,62}$/,
    'must be URI schemes such as myapp or com.shop.app (letters, digits, "+", ".", "-")',
  )
  .refine(
    (scheme) => !REFUSED_SCHEMES.has(scheme),
    'must not list http, https, javascript, data, file, blob or another browser scheme',
  );
export const RedirectSchemeList = z
  .union([z.array(z.string()), z.string().transform(commaList)], {
    error: 'must be a comma list of URI schemes such as myapp,com.shop.app',
  })
  .pipe(z.array(RedirectScheme));

/** A comma list of words (`SUCCESS,VERIFIED`), or an array: the `verificationStatus` values to accept. */
export const StatusWords = z
  .union([z.array(Text), z.string().transform(commaList)])
  .pipe(
    z
      .array(z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'must be words of letters, digits, "_" or "-"'))
      .min(1, 'must name at least one status'),
  );

export const WEBHOOK_SECRET = /^whsec_[A-Za-z0-9+/=]+$/;
export const WEBHOOK_SECRET_MESSAGE = 'must be a Standard Webhooks secret: whsec_ followed by base64';

/** Secrets that sign merchant events: an array, or a comma list (during a rotation every one signs). */
export const WebhookSecretList = z
  .union([z.array(Text), z.string().transform(commaList)])
  .pipe(z.array(z.string().regex(WEBHOOK_SECRET, WEBHOOK_SECRET_MESSAGE)).min(1, 'must list at least one secret'));

const PORT_FORM = 'must be a port number (0-65535)';
export const Port = z.coerce
  .number<unknown>({ error: PORT_FORM })
  .int(PORT_FORM)
  .min(0, PORT_FORM)
  .max(65_535, PORT_FORM);
export const Count = z.coerce
  .number<unknown>({ error: 'must be a whole number' })
  .int()
  .positive('must be greater than zero');
