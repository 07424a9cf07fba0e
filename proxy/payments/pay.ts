// Paying an order with a link reference (endpoint 4), for POST /transactions and `proxy.pay()` alike: the
// reference pays only for the user, order, amount and currency it was verified for; the order is paid once
// (orders.ts), whatever reference is offered; the amount and currency sent upstream are the verified ones.
// What the call upstream makes of the order (freed, `unknown` or paid) is submit.ts's.
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ProxyConfig } from '../config/schema.ts';
import type { RemovalStore } from '../storage/removals.ts';
import { problem, type ProblemError } from '../common/errors.ts';
import { ID_PATTERN, sessionLogRef } from '../common/ids.ts';
import type { TransactionClient } from '../upstream/transaction-client.ts';
import { resolveLinkRef, type LinkRefDeps } from './linked-account.ts';
import { Amount, CurrencyCode, text } from '../common/validation.ts';
import { claimOrder, earlierPayment, readPayment, type PaymentRecord, type Replay } from './orders.ts';
import { tellPaymentSucceeded, tellReauthorization } from './payment-events.ts';
import { createSubmitter, type SubmitDeps } from './submit.ts';
import type { SessionRecord } from '../storage/sessions.ts';
import { reauthorizationCode, reauthorizationRequired, staleAccountId } from '../accounts/reauthorization.ts';

/** CONTRACTS §3. Strict: a field the proxy does not know is refused, never passed to the provider. */
export const PaymentInput = z.strictObject({
  linkRef: z.string().regex(ID_PATTERN, 'must be the link reference the element gave the page'),
  merchantUserId: text(128),
  merchantTransactionId: text(128),
  /** What the merchant's server expects to charge: must equal the verified amount and currency. */
  amount: Amount,
  currency: CurrencyCode,
  product: text(64).optional(),
  language: text(35).optional(),
  transactionRegion: text(64).optional(),
  dataPassThrough: z.string().max(1024).optional(),
  originatorIp: z.union([z.ipv4(), z.ipv6()]).optional(),
});
export type PaymentInput = z.infer<typeof PaymentInput>;

/** What paying answers: the provider's answer (status and known body), or the first one again for a retry. */
export interface PaymentAnswer {
  status: number;
  body: Record<string, unknown>;
  /** True when this is the first payment's answer again (the same Idempotency-Key and body). */
  replayed: boolean;
}

/** 422: the reference was verified for someone or something else. */
function mismatch(path: string, detail: string): ProblemError {
  return problem('link-ref-mismatch', detail, { errors: [{ path, message: 'does not match the verification' }] });
}

const sameAmount = (a: string, b: string) => Number(a) === Number(b);

/** The payment must be exactly what the account was verified for. */
function requireVerifiedPurchase(record: SessionRecord, body: PaymentInput): void {
  if (record.merchantUserId !== body.merchantUserId)
    throw mismatch('merchantUserId', 'This account was verified for another merchant user.');
  if (record.merchantTransactionId !== body.merchantTransactionId)
    throw mismatch('merchantTransactionId', 'This account was verified for another order.');
  if (record.amount === undefined || !sameAmount(body.amount, record.amount)) {
    throw mismatch('amount', `This account was verified for an amount of ${record.amount ?? '(none)'}.`);
  }
  if (body.currency !== (record.currency ?? 'USD'))
    throw mismatch('currency', `This account was verified for ${record.currency ?? 'USD'}.`);
}

/** A digest of the request, so a retry with the same Idempotency-Key is recognised as the same request. */
function requestDigest(body: PaymentInput): string {
  const sorted = Object.fromEntries(Object.entries(body).sort(([a], [b]) => a.localeCompare(b)));
  return createHash('sha256').update(JSON.stringify(sorted)).digest('base64url');
}

/** The first answer again, for a retry with the same Idempotency-Key and body. */
function replayAnswer({ replay: payment }: Replay): PaymentAnswer {
  return { status: payment.providerStatus ?? 201, body: payment.providerResponse ?? {}, replayed: true };
}

export type Payer = (input: PaymentInput, idempotencyKey?: string) => Promise<PaymentAnswer>;

/** What paying needs: what sending needs (submit.ts), where link references lead, removals, the re-authorization codes. */
export interface PayerDeps extends SubmitDeps, LinkRefDeps {
  config: SubmitDeps['config'] & Pick<ProxyConfig, 'reauthorizationCodes'>;
  removals: Pick<RemovalStore, 'isRemoved'>;
}

/**
 * Pays orders through `client` (endpoint 4). Throws a ProblemError for every refusal the route answers
 * as a problem (404 unknown reference, 409 paid or in progress, 422 mismatch or reused key, …) and the
 * upstream errors (502, 504) as they are.
 */
export function createPayer(deps: PayerDeps, client: TransactionClient): Payer {
  const { config, logger } = deps;
  const submit = createSubmitter(deps, client);

  const tellReplayed = (payment: PaymentRecord) => tellPaymentSucceeded(deps, payment);

  return async function pay(input: PaymentInput, idempotencyKey?: string): Promise<PaymentAnswer> {
    const retry = { idempotencyKey, requestDigest: requestDigest(input) };
    // An order paid before answers with that payment, whatever link reference is offered now (unless the
    // merchant reconciled it as charging nothing: then this is the order's next payment).
    const earlier = await readPayment(deps, input.merchantTransactionId);
    if (earlier !== undefined && earlier.state !== 'not-charged') {
      const replayed = earlierPayment(deps, earlier, retry);
      await tellReplayed(replayed.replay);
      return replayAnswer(replayed);
    }
    const { record, outcome } = await resolveLinkRef(deps, input.linkRef);
    requireVerifiedPurchase(record, input);
    // A reference made from a saved account the shopper removed since pays nothing (storage/removals.ts).
    if (
      record.savedAccountId !== undefined &&
      record.merchantUserId !== undefined &&
      (await deps.removals.isRemoved(record.merchantUserId, record.savedAccountId))
    ) {
      throw problem(
        'saved-account-removed',
        'The shopper removed the saved account this link reference was made from; nothing was charged.',
        { errors: [{ path: 'linkRef', message: 'was made from a saved account the shopper removed' }] },
      );
    }
    const claimed = await claimOrder(
      deps,
      {
        merchantTransactionId: input.merchantTransactionId,
        merchantUserId: input.merchantUserId,
        amount: record.amount!,
        currency: record.currency ?? 'USD',
        accountLabel: outcome.accountLabel,
        fiName: outcome.fiName,
        fiAccountType: outcome.fiAccountType,
        linkRef: input.linkRef,
        requestDigest: retry.requestDigest,
        ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
      },
      retry,
    );
    if ('replay' in claimed) {
      await tellReplayed(claimed.replay);
      return replayAnswer(claimed);
    }
    const result = await submit(claimed, input, outcome.accountToken);
    // A stale account (nothing was charged, the order is free again): the shopper must reconnect it.
    const stale = result.status >= 400 ? reauthorizationCode(result.body, config.reauthorizationCodes) : undefined;
    if (stale) {
      logger.info(
        { merchantTransactionId: input.merchantTransactionId, providerCode: stale },
        'transaction refused: the account needs re-authorization',
      );
      const problem = reauthorizationRequired(record, outcome, stale);
      const accountId = staleAccountId(record, outcome);
      const { accountLabel, fiName, fiAccountType } = outcome;
      await tellReauthorization(deps, {
        merchantUserId: input.merchantUserId,
        accountLabel,
        fiName,
        fiAccountType,
        code: stale,
        merchantTransactionId: input.merchantTransactionId,
        ...(accountId ? { accountId } : {}),
      });
      throw problem;
    }
    logger.info(
      {
        merchantTransactionId: input.merchantTransactionId,
        linkRef: sessionLogRef(input.linkRef),
        status: result.status,
      },
      'interactive transaction submitted',
    );
    return { status: result.status, body: result.body, replayed: false };
  };
}
