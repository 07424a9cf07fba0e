// Endpoint 2: start a consumer verification and get the `consumerUrl`.
import { z } from 'zod';
import { AMOUNT_MESSAGE, AMOUNT_PATTERN } from '../../contracts/amount.ts';
import { bearerClient, type BearerClientOptions, callUpstream, connectionNeverEstablished, joinUrl } from './http.ts';
import { UpstreamHttpError, UpstreamResponseError } from './errors.ts';
import { withoutSecrets } from './provider-text.ts';
import { text } from '../common/validation.ts';

export const VERIFICATION_PATH = '/exp/ext/mint/ooes/v1/obv';

/**
 * The verification request as the proxy sends it (docs/UPSTREAM.md#d7-verification-request-fields).
 * Checked after the merchant's `enrichStart` hook, so a missing field is reported
 * by name before anything goes upstream.
 */
export const VerificationRequest = z.object({
  accountToken: text(512).optional(),
  countryCode: z.literal('US'),
  consumer: z.looseObject({
    firstName: text(100),
    lastName: text(100),
    email: z.email('must be an e-mail address').max(254),
  }),
  merchant: z.object({
    merchantId: text(100),
    merchantUserId: text(100),
    merchantTransactionId: text(100),
    merchantSubId: text(100).optional(),
    returnURL: z.url({ protocol: /^https?$/ }),
    notificationURL: z.url({ protocol: /^https?$/ }),
  }),
  transaction: z.object({
    amount: z.string().regex(AMOUNT_PATTERN, `amount ${AMOUNT_MESSAGE}`),
    currency: z.string().regex(/^[A-Z]{3}$/, 'currency must be a 3-letter ISO 4217 code'),
    product: text(64),
    transactionRegion: text(64).optional(),
    language: text(35).optional(),
    dataPassThrough: z.string().max(1000).optional(),
    originatorIp: z.union([z.ipv4(), z.ipv6()]).optional(),
  }),
});
export type VerificationRequest = z.infer<typeof VerificationRequest>;

/** Endpoint 2's answer; other fields (the sandbox adds `verificationId`) are kept but not relied on. */
export const VerificationResponse = z.looseObject({
  consumerUrl: z.url({ protocol: /^https?$/, error: 'consumerUrl must be an absolute http(s) URL' }),
});
export type VerificationResponse = z.infer<typeof VerificationResponse>;

export interface VerificationClientOptions extends BearerClientOptions {
  baseUrl: string;
}

export interface VerificationClient {
  /** Calls endpoint 2. Throws an Upstream* error (or a TokenError) on any failure. */
  start(request: VerificationRequest): Promise<VerificationResponse>;
}

/**
 * Retry policy for this POST: a retry could create a second verification upstream, so it is sent
 * again only when the connection was never established (refused, DNS) — the provider cannot have seen
 * it. Time-outs and 5xx are NOT retried: the provider may have created the verification; the browser
 * gets a 502/504 and the consumer can click again (a fresh start is cheap, a duplicate is not
 * observable). A 401 is retried once with a fresh token by the bearer hooks.
 */
export function createVerificationClient(options: VerificationClientOptions): VerificationClient {
  const url = joinUrl(options.baseUrl, VERIFICATION_PATH);
  const client = bearerClient(options, {
    retry: { limit: 1, methods: ['post'], shouldRetry: ({ error }) => connectionNeverEstablished(error) },
  });
  return {
    async start(request) {
      const body = await callUpstream('POST', url, () =>
        client.post(url, { json: request, headers: { accept: 'application/json' } }).json(),
      ).catch((error: unknown) => {
        // A refusal of a re-verification may echo the accountToken it was sent: it leaves here without it.
        if (!(error instanceof UpstreamHttpError) || !request.accountToken) throw error;
        throw new UpstreamHttpError(
          error.method,
          error.url,
          error.status,
          withoutSecrets(error.body, [request.accountToken]),
        );
      });
      const parsed = VerificationResponse.safeParse(body);
      if (!parsed.success) {
        throw new UpstreamResponseError('POST', url, z.prettifyError(parsed.error).replaceAll('\n', '; '));
      }
      return parsed.data;
    },
  };
}
