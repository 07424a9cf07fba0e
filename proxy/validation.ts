// Input checks shared by the routes and the upstream client: the one zod rule for free text, and the
// one way a failed parse becomes a 400 naming every failing field.
import { z } from 'zod';
import { type FieldError, problem } from './errors.ts';

/** Non-empty text after trimming, at most `max` characters. */
export const text = (max: number) => z.string().trim().min(1).max(max);

/** zod issues → `[{path, message}]`, paths dotted (`consumer.email`), the root named `body`. */
export function fieldErrors(error: z.ZodError, prefix = ''): FieldError[] {
  return error.issues.map((issue) => {
    const path = [prefix, ...issue.path.map(String)].filter(Boolean).join('.') || 'body';
    return { path, message: issue.message };
  });
}

/** The 400 for `errors`: "`{what}` {verdict}: path: message; …". */
export function validationProblem(what: string, errors: FieldError[], verdict = 'is invalid') {
  return problem('validation', `${what} ${verdict}: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors });
}

/**
 * Parses `value` with `schema`, or throws a 400 naming every failing field. `what` names the input in
 * the detail ("The request body"); `prefix` goes before each field path (a header's name).
 */
export function parseOrThrow<Schema extends z.ZodType>(schema: Schema, value: unknown, what: string, prefix = ''): z.output<Schema> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw validationProblem(what, fieldErrors(result.error, prefix));
}
