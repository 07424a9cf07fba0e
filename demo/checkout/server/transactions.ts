// The merchant server's calls to the proxy (CONTRACTS.md §3), server to server with the merchant API key,
// which therefore never appears in the page: make the link session a checkout page carries, read the
// account behind a link reference, and pay with it.
import { z } from 'zod';

/** The proxy's pass-through of the interactive transaction's 201. */
export const TransactionResponse = z.object({
  transactionId: z.string().min(1),
  transactionStatus: z.string().min(1),
  merchantTransactionId: z.string().optional(),
});
export type TransactionResponse = z.infer<typeof TransactionResponse>;

/** What the shop tells the proxy about one checkout (POST /link-sessions): everything, from its own records. */
export interface LinkSessionRequest {
  merchantUserId: string;
  merchantTransactionId: string;
  amount: string;
  currency: string;
  consumer: { firstName: string; lastName: string; email: string };
  language?: string;
  /** Returning shoppers: their saved accounts (sealed strings), saving allowed, an account to re-authorize. */
  savedAccounts?: string[];
  allowSaving?: boolean;
  reauthorize?: string;
}

const CreatedLinkSession = z.object({ linkToken: z.string().min(1), expiresAt: z.string() });

/** What the shop sends to redeem a link reference: the reference and the order it must belong to. */
export interface TransactionRequest {
  linkRef: string;
  merchantUserId: string;
  merchantTransactionId: string;
  amount: string;
  currency: string;
  language?: string;
  originatorIp?: string;
}

export type TransactionResult =
  | { ok: true; response: TransactionResponse }
  /** `reconnect`: the proxy said `reauthorization-required` for this saved account id. */
  | { ok: false; title: string; detail: string; reconnect?: string };

const SavedAccount = z.object({
  sealed: z.string(),
  accountId: z.string(),
  accountLabel: z.string(),
  fiName: z.string(),
  fiAccountType: z.string(),
  linkedAt: z.string(),
  consent: z.record(z.string(), z.unknown()).optional(),
});

/**
 * The display fields of a verified account, as the proxy's GET /links/:ref returns them to the server,
 * and the saved account when the shopper asked to save it (or re-authorized it).
 */
export const LinkedAccount = z.object({
  accountLabel: z.string(),
  fiName: z.string(),
  fiAccountType: z.string(),
  savedAccount: SavedAccount.optional(),
});
export type LinkedAccount = z.infer<typeof LinkedAccount>;

export interface TransactionClientOptions {
  /** Base of the proxy's routes, e.g. `http://127.0.0.1:8080/obv`. */
  proxyBase: string;
  merchantApiKey: string;
  timeoutMs?: number;
}

const Problem = z.object({
  type: z.string().optional(),
  title: z.string().optional(),
  detail: z.string().optional(),
  account: z.object({ accountId: z.string().optional() }).optional(),
});

/** The shop's client of the proxy's server-only routes. Neither call throws. */
export function createTransactionClient(options: TransactionClientOptions) {
  const base = options.proxyBase.replace(/\/$/, '');
  const call = (path: string, init: RequestInit = {}) =>
    fetch(`${base}${path}`, {
      ...init,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${options.merchantApiKey}` },
      signal: AbortSignal.timeout(options.timeoutMs ?? 15_000),
    });

  return {
    /** A link session for one checkout: the link token the page's element carries. Throws when the proxy refuses. */
    async createLinkSession(request: LinkSessionRequest): Promise<{ linkToken: string; expiresAt: number }> {
      const response = await call('/link-sessions', { method: 'POST', body: JSON.stringify(request) });
      const body: unknown = await response.json().catch(() => undefined);
      const parsed = CreatedLinkSession.safeParse(body);
      if (response.status !== 201 || !parsed.success)
        throw new Error(`POST /link-sessions answered ${response.status}: ${JSON.stringify(body)}`);
      return { linkToken: parsed.data.linkToken, expiresAt: Date.parse(parsed.data.expiresAt) };
    },

    /** The verified account behind a reference, for the receipt; undefined if the proxy does not know it. */
    async linkedAccount(linkRef: string): Promise<LinkedAccount | undefined> {
      try {
        const response = await call(`/links/${encodeURIComponent(linkRef)}`);
        const parsed = LinkedAccount.safeParse(await response.json().catch(() => undefined));
        return response.ok && parsed.success ? parsed.data : undefined;
      } catch {
        return undefined;
      }
    },

    /** Redeems the reference for an interactive transaction. */
    async charge(request: TransactionRequest): Promise<TransactionResult> {
      let response: Response;
      try {
        response = await call('/transactions', { method: 'POST', body: JSON.stringify(request) });
      } catch (error) {
        return {
          ok: false,
          title: 'Payment service unavailable',
          detail: `The payment service did not answer (${(error as Error).message}).`,
        };
      }
      const body: unknown = await response.json().catch(() => undefined);
      if (response.ok) {
        const parsed = TransactionResponse.safeParse(body);
        if (parsed.success) return { ok: true, response: parsed.data };
        return {
          ok: false,
          title: 'Unexpected response',
          detail: 'The payment service answered with an unexpected body.',
        };
      }
      const problem = Problem.safeParse(body);
      const reconnect =
        problem.success && problem.data.type === 'urn:obv-link:problem:reauthorization-required'
          ? problem.data.account?.accountId
          : undefined;
      return {
        ...(reconnect ? { reconnect } : {}),
        ok: false,
        title: (problem.success && problem.data.title) || `Declined (${response.status})`,
        detail: (problem.success && problem.data.detail) || 'The payment was declined.',
      };
    },
  };
}

export type TransactionClient = ReturnType<typeof createTransactionClient>;
