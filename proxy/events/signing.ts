// Standard Webhooks signing (https://www.standardwebhooks.com) of an outgoing merchant event: the
// counterpart of common/webhook-signature.ts. With several secrets (a rotation) every one signs, and the
// signatures go space-separated in one header, so the merchant's old and new secret both verify.
import { createHmac } from 'node:crypto';
import { webhookKeyBytes } from '../config/webhook-keys.ts';

export interface SignedHeaders {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
}

export type EventSigner = (id: string, body: string, nowMs: number) => SignedHeaders;

/** A signer for `secrets` (`whsec_` + base64 key each), keys decoded once. */
export function createEventSigner(secrets: readonly string[]): EventSigner {
  const keys = secrets.map(webhookKeyBytes);
  if (keys.length === 0 || keys.some((key) => key.length === 0))
    throw new Error('every events secret must be a non-empty whsec_ key');
  return (id, body, nowMs) => {
    const timestamp = String(Math.floor(nowMs / 1000));
    const content = `${id}.${timestamp}.${body}`;
    const signature = keys.map((key) => `v1,${createHmac('sha256', key).update(content).digest('base64')}`).join(' ');
    return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': signature };
  };
}
