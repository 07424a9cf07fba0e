// The merchant server's one call to the proxy (CONTRACTS.md §3): charge a linked account. It runs
// server to server with the merchant API key, which therefore never appears in the page.
import { z } from 'zod';

/** The proxy's pass-through of the interactive transaction's 201. */
export const TransactionResponse = z.object({
  transactionId: z.string().min(1),
  transactionStatus: z.string().min(1),
  merchantTransactionId: z.string().optional(),
});
export type TransactionResponse = z.infer<typeof TransactionResponse>;

export interface TransactionRequest {
  accountToken: string;
  merchantTransactionId: string;
  language?: string;
  originatorIp?: string;
}

export type TransactionResult =
  | { ok: true; response: TransactionResponse }
  | { ok: false; title: string; detail: string };

export interface TransactionClientOptions {
  /** Base of the proxy's routes, e.g. `http://127.0.0.1:8080/obv`. */
  proxyBase: string;
  merchantApiKey: string;
  timeoutMs?: number;
}

const Problem = z.object({ title: z.string().optional(), detail: z.string().optional() });

/** Returns a function that asks the proxy for an interactive transaction and never throws. */
export function createTransactionClient(options: TransactionClientOptions) {
  const url = `${options.proxyBase.replace(/\/$/, '')}/transactions`;
  return async function charge(request: TransactionRequest): Promise<TransactionResult> {
    let response: Response;
    try {
      response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${options.merchantApiKey}` },
        body: JSON.stringify(request),
        signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
      });
    } catch (error) {
      return { ok: false, title: 'Payment service unavailable', detail: `The payment service did not answer (${(error as Error).message}).` };
    }
    const body: unknown = await response.json().catch(() => undefined);
    if (response.ok) {
      const parsed = TransactionResponse.safeParse(body);
      if (parsed.success) return { ok: true, response: parsed.data };
      return { ok: false, title: 'Unexpected response', detail: 'The payment service answered with an unexpected body.' };
    }
    const problem = Problem.safeParse(body);
    return {
      ok: false,
      title: (problem.success && problem.data.title) || `Declined (${response.status})`,
      detail: (problem.success && problem.data.detail) || 'The payment was declined.',
    };
  };
}

export type ChargeFunction = ReturnType<typeof createTransactionClient>;
