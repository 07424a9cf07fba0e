import { randomBytes } from 'node:crypto';

/** 128 random bits, base64url: session ids and notification references. */
export function newId(): string {
  return randomBytes(16).toString('base64url');
}

/** What a session id or reference looks like; anything else is answered 404 without a store lookup. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;
