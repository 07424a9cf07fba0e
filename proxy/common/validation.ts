// Input checks shared by the routes and the upstream client: the one zod rule for free text, the one way
// a failed parse becomes a 400 naming every failing field, and `describes`, which ties a schema written
// for a type the code already has to that type.
import type { Request } from 'express';
import { z } from 'zod';
import { AMOUNT_MESSAGE, AMOUNT_PATTERN } from '../../contracts/amount.ts';
import { type FieldError, problem } from './errors.ts';

/** `value` if it is a plain JSON object, else an empty one: for reading undocumented answers field by field. */
export function asObject(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** Non-empty text after trimming, at most `max` characters. */
export const text = (max: number) => z.string().trim().min(1).max(max);

/** The purchase fields every route checks the same way (CONTRACTS §2, §3). */
export const Amount = z.string().regex(AMOUNT_PATTERN, AMOUNT_MESSAGE);
export const CurrencyCode = z.string().regex(/^[A-Z]{3}$/, 'must be a 3-letter ISO 4217 code such as USD');
/** An Idempotency-Key header (POST /verifications, POST /transactions). */
export const IdempotencyKey = z.string().regex(/^[\x21-\x7e]{1,255}$/, 'must be 1-255 visible ASCII characters');
export const LanguageTag = z
  .string()
  .regex(/^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'must be a language tag such as en or es-US');

/**
 * zod issues → `[{path, message}]`, paths dotted (`consumer.email`), the root named `body`. A strict
 * object's unknown keys are named one by one, so the caller sees exactly which field to drop.
 */
export function fieldErrors(error: z.ZodError, prefix = ''): FieldError[] {
  return error.issues.flatMap((issue) => {
    const at = (...extra: string[]) =>
      [prefix, ...issue.path.map(String), ...extra].filter(Boolean).join('.') || 'body';
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => ({ path: at(key), message: 'is not a field of this request' }));
    return [{ path: at(), message: issue.message }];
  });
}

/** The 400 for `errors`: "`{what}` {verdict}: path: message; …". */
export function validationProblem(what: string, errors: FieldError[], verdict = 'is invalid') {
  return problem('validation', `${what} ${verdict}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, {
    errors,
  });
}

/**
 * Parses `value` with `schema`, or throws a 400 naming every failing field. `what` names the input in
 * the detail ("The request body"); `prefix` goes before each field path (a header's name).
 */
export function parseOrThrow<Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  what: string,
  prefix = '',
): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationProblem(what, fieldErrors(result.error, prefix));
}

/** A route's JSON body parsed with `schema`: 415 unless it is application/json, else as parseOrThrow. */
export function parseJsonBody<Schema extends z.ZodType>(
  schema: Schema,
  req: Pick<Request, 'is' | 'body'>,
): z.output<Schema> {
  if (!req.is('application/json'))
    throw problem('unsupported-media-type', 'The request body must be application/json.');
  return parseOrThrow(schema, req.body, 'The request body');
}

/**
 * Compile time only: `schema`'s output and `T` as JSON carries it are assignable both ways, so a schema
 * written for a type the code already has cannot drift from it (the build fails instead).
 */
export function describes<T>() {
  return <Schema extends z.ZodType>(
    schema: Schema & (SameShape<z.output<Schema>, Json<T>> extends true ? unknown : { schemaDiffersFrom: T }),
  ) => schema;
}
type SameShape<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
/** `T` after JSON.stringify at the top level: a key whose value may be undefined may be absent. */
type Json<T> = T extends object
  ? { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
      [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>;
    }
  : T;
