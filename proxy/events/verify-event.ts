// The merchant's side of an event, in process: check a delivery's Standard Webhooks signature against
// OBV_EVENTS_SECRETS (any of them, as during a rotation) and parse its body, as the events guide's handler does (docs/EVENTS.md)
// by hand in other languages. Throws WebhookSignatureError for a forged, altered or stale delivery.
import { createWebhookVerifier, WebhookSignatureError } from '../common/webhook-signature.ts';
import { MerchantEventSchema, type MerchantEvent } from '../storage/events.ts';

/** The headers of a delivery, by name (any case), as Express's `req.headers` or a fetch Headers object gives them. */
export type DeliveryHeaders = Record<string, string | string[] | undefined> | Headers;

export type EventVerifier = (body: string | Buffer, headers: DeliveryHeaders, nowMs?: number) => MerchantEvent;

function header(headers: DeliveryHeaders, name: string): string {
  if (headers instanceof Headers) return headers.get(name) ?? '';
  const entry = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return (Array.isArray(entry) ? entry[0] : entry) ?? '';
}

export function createEventVerifier(secrets: readonly string[]): EventVerifier {
  const verifiers = secrets.map(createWebhookVerifier);
  return (body, headers, nowMs) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    const signed = {
      id: header(headers, 'webhook-id'),
      timestamp: header(headers, 'webhook-timestamp'),
      signature: header(headers, 'webhook-signature'),
    };
    let failure: unknown = new WebhookSignatureError('No events secret is configured (OBV_EVENTS_SECRETS)');
    for (const verifier of verifiers) {
      try {
        verifier.verify(text, signed, nowMs);
        const event = MerchantEventSchema.parse(JSON.parse(text)) as MerchantEvent;
        if (event.id !== signed.id) throw new WebhookSignatureError('The body is not the event its webhook-id names');
        return event;
      } catch (error) {
        failure = error;
        if (!(error instanceof WebhookSignatureError)) throw error;
      }
    }
    throw failure;
  };
}
