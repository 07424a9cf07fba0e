// The cookie that binds a session's bank step to the browser that started it (sessions/bank-step.ts).
// Set on the answer to the start, which only a page on the proxy's own origin receives with cookies (the
// element's fetch sends and stores cookies same-origin only); scoped to that session's return path,
// HttpOnly and SameSite=Lax, so the bank's redirect back (a top-level GET navigation) carries it and
// nothing else does. An attacker who starts a session holds the cookie in their own browser and cannot
// put it into a victim's.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import type { ProxyConfig } from '../config/schema.ts';
import { problem } from '../errors.ts';
import type { SessionRecord } from '../sessions/types.ts';
import { RECORD_GRACE_MS } from '../config/limits.ts';

export const BANK_STEP_COOKIE = 'obv_bank_step';

/** The path of `returnRef`'s return page as browsers see it (publicUrl's own path, then the mount). */
function returnPath(config: ProxyConfig, returnRef: string): string {
  return `${new URL(config.publicUrl).pathname.replace(/\/+$/, '')}${config.mountPath}/return/${returnRef}`;
}

/**
 * The binding secret for a new session, or undefined when binding is off (OBV_BIND_BANK_STEP=false).
 * Refuses (403) a start whose answer could not set the cookie in the page's browser: one not sent by a
 * page on OBV_PUBLIC_URL's origin (another origin, a server, a script that sends no Origin).
 */
export function newBankStepBinding(config: ProxyConfig, req: Request): string | undefined {
  if (!config.bindBankStep) return undefined;
  const publicOrigin = new URL(config.publicUrl).origin;
  const site = req.get('sec-fetch-site');
  if (req.get('origin') !== publicOrigin || (site !== undefined && site !== 'same-origin')) {
    throw problem('bank-step-unbindable',
      `Verifications start only from pages on ${publicOrigin} while OBV_BIND_BANK_STEP is on: the bank step is bound to the `
      + 'starting browser by a cookie of that origin. Serve the checkout from OBV_PUBLIC_URL\'s origin, or set OBV_BIND_BANK_STEP=false '
      + '(README "Security notes").');
  }
  return randomBytes(32).toString('base64url');
}

/** Sets `record`'s binding cookie on the start's answer (again on an idempotent repeat: same value). */
export function setBankStepCookie(res: Response, config: ProxyConfig, record: SessionRecord, now: number): void {
  if (!record.browserBinding || !record.returnRef) return;
  res.cookie(BANK_STEP_COOKIE, record.browserBinding, {
    path: returnPath(config, record.returnRef),
    httpOnly: true,
    sameSite: 'lax',
    secure: new URL(config.publicUrl).protocol === 'https:',
    maxAge: Math.max(0, record.expiresAt - now) + RECORD_GRACE_MS,
  });
}

/** The binding cookies a request carries (a browser sends one per matching path; any may be ours). */
function bindingCookies(req: Request): string[] {
  return (req.get('cookie') ?? '').split(';').map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${BANK_STEP_COOKIE}=`))
    .map((pair) => pair.slice(BANK_STEP_COOKIE.length + 1));
}

/** True when the request carries `record`'s binding cookie (constant-time comparison). */
export function carriesBankStepCookie(req: Request, record: SessionRecord): boolean {
  const expected = Buffer.from(record.browserBinding ?? '');
  if (expected.length === 0) return false;
  return bindingCookies(req).some((value) => {
    const given = Buffer.from(value);
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}
