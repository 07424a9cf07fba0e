// The cookie that binds a session's bank step to the browser that started it (verifications/bank-step.ts).
// One opaque secret per browser, `obv_bank_step`, scoped to the proxy's mount path (never to one
// session's return page: nothing in it names the URL that confirms a step), HttpOnly and SameSite=Lax
// so the bank's redirect back (a top-level GET navigation) carries it. A start reuses the secret the
// browser already holds, so two checkouts in one browser keep both their bindings. The session keeps
// only the secret's SHA-256.
//
// The cookie says "this request comes from the browser that started", and whoever started holds it —
// an attacker's script too: a script sets any Origin it likes and reads Set-Cookie. So the cookie is
// never proof that the bank step was done by its holder; verifications/bank-step.ts decides what a return
// with it may confirm. The Origin check below is a usability guard (a start from a page the cookie could
// not reach would never be confirmable), not a security boundary.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { ProxyConfig } from '../config/schema.ts';
import { problem } from '../common/errors.ts';
import type { SessionRecord } from '../storage/sessions.ts';
import { RECORD_GRACE_MS } from '../config/limits.ts';

export const BANK_STEP_COOKIE = 'obv_bank_step';

/** A browser's secret: 32 random bytes, base64url. */
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The path every proxy route lives under, as browsers see it (publicUrl's own path, then the mount). */
function mountPath(config: Pick<ProxyConfig, 'publicUrl' | 'mountPath'>): string {
  return `${new URL(config.publicUrl).pathname.replace(/\/+$/, '')}${config.mountPath}` || '/';
}

/** What a session keeps of its browser's secret. */
function bindingOf(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url');
}

/** The binding cookies a request carries (a stray duplicate may come along: each is tried). */
function bindingCookies(req: Request): string[] {
  return (req.get('cookie') ?? '')
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${BANK_STEP_COOKIE}=`))
    .map((pair) => pair.slice(BANK_STEP_COOKIE.length + 1))
    .filter((value) => SECRET_PATTERN.test(value));
}

/** The binding of a new session and the browser secret its answer sets; undefined when binding is off. */
export interface NewBinding {
  /** The SHA-256 of `secret`: what the session record keeps (`browserBinding`). */
  binding: string;
  secret: string;
}

/**
 * The binding for a new session, or undefined when binding is off (OBV_BIND_BANK_STEP=false): the
 * browser's own secret when it sends exactly one, else a new one. Refuses (403) a start whose answer
 * could not set the cookie in a page's browser (one not sent by a page on OBV_PUBLIC_URL's origin),
 * so a misconfigured checkout fails at once instead of never confirming.
 */
export function newBankStepBinding(
  config: Pick<ProxyConfig, 'bindBankStep' | 'publicUrl'>,
  req: Request,
): NewBinding | undefined {
  if (!config.bindBankStep) return undefined;
  const publicOrigin = new URL(config.publicUrl).origin;
  const site = req.get('sec-fetch-site');
  if (req.get('origin') !== publicOrigin || (site !== undefined && site !== 'same-origin')) {
    throw problem(
      'bank-step-unbindable',
      `Verifications start only from pages on ${publicOrigin} while OBV_BIND_BANK_STEP is on: the bank step is bound to the ` +
        "starting browser by a cookie of that origin. Serve the checkout from OBV_PUBLIC_URL's origin, or set OBV_BIND_BANK_STEP=false " +
        '(docs/PROXY.md "Security notes").',
    );
  }
  const held = bindingCookies(req);
  const secret = held.length === 1 ? held[0]! : randomBytes(32).toString('base64url');
  return { binding: bindingOf(secret), secret };
}

/**
 * Sets the browser's secret on the start's answer: the new one, or on an idempotent repeat the one the
 * request carries when it is the session's (another client repeating the key gets no cookie).
 */
export function setBankStepCookie(
  res: Response,
  config: Pick<ProxyConfig, 'publicUrl' | 'mountPath'>,
  record: SessionRecord,
  now: number,
  made: NewBinding | undefined,
): void {
  if (!record.browserBinding) return;
  const value =
    made?.binding === record.browserBinding
      ? made.secret
      : bindingCookies(res.req).find((held) => carriesBinding(held, record));
  if (!value) return;
  res.cookie(BANK_STEP_COOKIE, value, {
    path: mountPath(config),
    httpOnly: true,
    sameSite: 'lax',
    secure: new URL(config.publicUrl).protocol === 'https:',
    maxAge: Math.max(0, record.expiresAt - now) + RECORD_GRACE_MS,
  });
}

function carriesBinding(secret: string, record: SessionRecord): boolean {
  const expected = Buffer.from(record.browserBinding ?? '');
  const given = Buffer.from(bindingOf(secret));
  return expected.length > 0 && given.length === expected.length && timingSafeEqual(given, expected);
}

/** True when the request carries the secret of `record`'s binding (constant-time comparison of digests). */
export function carriesBankStepCookie(req: Request, record: SessionRecord): boolean {
  return bindingCookies(req).some((secret) => carriesBinding(secret, record));
}
