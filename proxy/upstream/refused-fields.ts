// The provider's field errors turned into the proxy's own words for the browser (provider-text.ts says why).
import { z } from 'zod';
import type { FieldError } from '../common/errors.ts';
import { providerFieldErrors } from './provider-text.ts';
import { TransactionRequest } from './transaction-client.ts';
import { VerificationRequest } from './verification-client.ts';

/** Every leaf path of a zod object schema ("merchant.merchantUserId"). */
function leafPaths(schema: z.ZodType, prefix = ''): string[] {
  let inner: z.ZodType = schema;
  while (inner instanceof z.ZodOptional || inner instanceof z.ZodNullable) inner = inner.unwrap() as z.ZodType;
  if (!(inner instanceof z.ZodObject)) return prefix ? [prefix] : [];
  return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, value]) =>
    leafPaths(value, prefix ? `${prefix}.${key}` : key),
  );
}

/** The request fields the proxy itself sends upstream: the only paths a browser may see named. */
const KNOWN_PATHS: ReadonlySet<string> = new Set([...leafPaths(VerificationRequest), ...leafPaths(TransactionRequest)]);

/**
 * The provider's field errors in the proxy's own words: only fields the proxy knows it sent, each
 * with the same message, and nothing of the provider's text.
 */
export function refusedFields(body: unknown): FieldError[] {
  const paths = new Set(
    providerFieldErrors(body)
      .map((error) => error.path)
      .filter((path) => KNOWN_PATHS.has(path)),
  );
  return [...paths].map((path) => ({ path, message: 'was refused by the verification service' }));
}
