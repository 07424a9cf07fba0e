// Endpoint 4: the interactive transaction that consumes the account token.
import { z } from 'zod';
import { bearerClient, type BearerClientOptions, callUpstream, joinUrl, readBody } from './http.ts';
import { UpstreamHttpError, UpstreamResponseError } from './errors.ts';
import { withoutSecrets } from './provider-text.ts';

export const TRANSACTION_PATH = '/transaction/v4/interactive';

/** The fields of the interactive transaction the verification flow relies on (docs/UPSTREAM.md#endpoint-4-interactive-transaction); others pass through. */
export const TransactionRequest = z.looseObject({
  product: z.string().min(1),
  countryCode: z.string().length(2),
  transactionRegion: z.string().optional(),
  language: z.string().optional(),
  dataPassThrough: z.string().optional(),
  originatorIp: z.string().optional(),
  merchant: z.looseObject({
    merchantId: z.string().min(1),
    merchantUserId: z.string().min(1).optional(),
    merchantTransactionId: z.string().min(1),
    merchantSubId: z.string().optional(),
  }),
  accountToken: z.string().min(1),
});
export type TransactionRequest = z.infer<typeof TransactionRequest>;

/** The provider does not document the answer: only a JSON object is required (docs/UPSTREAM.md#d18-transaction-answer). */
const TransactionResponseBody = z.record(z.string(), z.unknown());

export interface TransactionClientOptions extends BearerClientOptions {
  gatewayUrl: string;
  pgwAppId: string;
  pgwClientId: string;
}

/** The provider's answer, passed through to the merchant server. */
export interface TransactionResult {
  status: number;
  body: Record<string, unknown>;
}

export interface TransactionClient {
  /**
   * Calls endpoint 4. 2xx and the provider's own 4xx verdicts (e.g. 422 unknown accountToken) are
   * returned; a 401 that survives the token refresh, a 5xx or a transport failure throws.
   */
  submit(request: TransactionRequest): Promise<TransactionResult>;
}

/**
 * Never retried automatically (this moves money; a lost response must be reconciled by the merchant,
 * not guessed at), except the single 401 retry of the bearer hooks, which is safe because the provider
 * refused the request without acting on it.
 */
export function createTransactionClient(options: TransactionClientOptions): TransactionClient {
  const url = joinUrl(options.gatewayUrl, TRANSACTION_PATH);
  // methods: [] disables ordinary retries; the bearer hook's forced retry still applies.
  const client = bearerClient(options, { retry: { limit: 1, methods: [] }, throwHttpErrors: false });
  const headers = {
    accept: 'application/json',
    'x-pgw-app-id': options.pgwAppId,
    'x-pgw-client-id': options.pgwClientId,
  };
  return {
    async submit(request) {
      const response = await callUpstream('POST', url, () => client.post(url, { json: request, headers }));
      // The provider's answer goes to the merchant's server, which may show it to the shopper: never with the token.
      const body = withoutSecrets(await readBody(response), [request.accountToken]);
      if (response.status === 401 || response.status >= 500) {
        throw new UpstreamHttpError('POST', url, response.status, body);
      }
      const parsed = TransactionResponseBody.safeParse(body);
      if (!parsed.success)
        throw new UpstreamResponseError('POST', url, `HTTP ${response.status} without a JSON object body`);
      return { status: response.status, body: parsed.data };
    },
  };
}
