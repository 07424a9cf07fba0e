// What a Standard Webhooks secret (`whsec_` + base64) stands for. Here, beside the settings, because the
// production guardrails compare keys (guardrails.ts) as much as the signature check and the events' signer use them.

const SECRET_PREFIX = 'whsec_';

/**
 * The key a `whsec_…` secret stands for: base64 after the prefix, decoded leniently as the standardwebhooks
 * package does. What checks the provider's notifications (common/webhook-signature.ts), signs merchant
 * events (events/signing.ts), and what the production guardrails compare.
 */
export function webhookKeyBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64');
}
