// The Standard Webhooks signature check (https://www.standardwebhooks.com), the same rules and messages
// as the `standardwebhooks` package's `Webhook.verify`, but with node:crypto's native HMAC-SHA256 and a
// key decoded once. The package hashes in pure JavaScript (fast-sha256) and re-encodes every string
// it compares: about a twentieth of the server's CPU per notification, several times node:crypto's.
// Kept hand-rolled because a figure the benchmark reports depends on it: "notification intake" (req/s and
// server CPU per notification, docs/PERFORMANCE.md). test/node/proxy/webhook-signature.test.ts checks
// it against the package case by case. Delete it for `new Webhook(secret).verify` when the package hashes
// with node:crypto, or when that row is dropped.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { webhookKeyBytes } from '../config/webhook-keys.ts';

/** Timestamps further than this from our clock are refused (replay window), as the package does. */
const TOLERANCE_SECONDS = 5 * 60;

/** A rejected signature; `message` says why (it is logged and sent in the 401 detail). */
export class WebhookSignatureError extends Error {
  override name = 'WebhookSignatureError';
}

/** The three Standard Webhooks headers, as received (missing ones as ''). */
export interface WebhookHeaders {
  id: string;
  timestamp: string;
  signature: string;
}

export interface WebhookVerifier {
  /** Throws WebhookSignatureError unless one `v1,` signature in the header matches `payload`. */
  verify(payload: string, headers: WebhookHeaders, nowMs?: number): void;
}

/** Builds a verifier for a `whsec_…` secret (the key is base64 after the prefix). */
export function createWebhookVerifier(secret: string): WebhookVerifier {
  const key = webhookKeyBytes(secret);
  if (key.length === 0) throw new Error("Secret can't be empty.");
  return {
    verify(payload, { id, timestamp, signature }, nowMs = Date.now()) {
      if (!signature || !id || !timestamp) throw new WebhookSignatureError('Missing required headers');
      const seconds = parseInt(timestamp, 10);
      if (Number.isNaN(seconds)) throw new WebhookSignatureError('Invalid Signature Headers');
      const now = Math.floor(nowMs / 1000);
      if (now - seconds > TOLERANCE_SECONDS) throw new WebhookSignatureError('Message timestamp too old');
      if (seconds > now + TOLERANCE_SECONDS) throw new WebhookSignatureError('Message timestamp too new');
      // Signed content: `${id}.${timestamp}.${body}`, the timestamp as the integer parsed above, the body
      // as the UTF-8 text the route read (so bytes that are not UTF-8 are hashed as the package does).
      const expected = createHmac('sha256', key).update(`${id}.${seconds}.${payload}`).digest('base64');
      const expectedBytes = Buffer.from(expected);
      for (const versioned of signature.split(' ')) {
        const comma = versioned.indexOf(',');
        if (comma === -1 || versioned.slice(0, comma) !== 'v1') continue;
        // Only the part up to a second comma counts, as in the package (`"v1,sig,x".split(",")[1]`).
        const end = versioned.indexOf(',', comma + 1);
        const candidate = Buffer.from(versioned.slice(comma + 1, end === -1 ? undefined : end));
        if (candidate.length === expectedBytes.length && timingSafeEqual(candidate, expectedBytes)) return;
      }
      throw new WebhookSignatureError('No matching signature found');
    },
  };
}
