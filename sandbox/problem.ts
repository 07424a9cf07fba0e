// RFC 9457 problem details: the one error shape of endpoints 2 and 4 and of everything that is not
// the token endpoint (which speaks RFC 6749 §5.2 instead, see token-endpoint.ts).
import type { Response } from 'express';
import type { z } from 'zod';

/** One failing input, named by its path in the body (`merchant.returnURL`) or header (`x-pgw-app-id`). */
export interface ProblemField {
  path: string;
  message: string;
}

/** Every status the sandbox answers a problem with, and its one title (`type` is always about:blank). */
const PROBLEM_TITLES = {
  400: 'Invalid request',
  401: 'Unauthorized',
  404: 'Not Found',
  405: 'Method Not Allowed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable request',
  500: 'Internal Server Error',
} as const;

export type ProblemStatus = keyof typeof PROBLEM_TITLES;

/** An error that knows how it answers: thrown by handlers, written by the final error handler. */
export class HttpProblem extends Error {
  readonly status: number;
  readonly title: string;
  readonly errors: ProblemField[] | undefined;
  readonly headers: Record<string, string>;
  /** A machine-readable reason beside the status (e.g. `REAUTHORIZATION_REQUIRED` on endpoint 4). */
  readonly errorCode: string | undefined;

  constructor(
    kind: ProblemStatus,
    detail: string,
    /** `status`: a library's own 4xx, sent instead of `kind` under `kind`'s title. */
    extra: { errors?: ProblemField[]; headers?: Record<string, string>; status?: number; errorCode?: string } = {},
  ) {
    super(detail);
    this.name = 'HttpProblem';
    this.status = extra.status ?? kind;
    this.title = PROBLEM_TITLES[kind];
    this.errors = extra.errors;
    this.headers = extra.headers ?? {};
    this.errorCode = extra.errorCode;
  }
}

/** Writes `problem` as `application/problem+json`. */
export function sendProblem(res: Response, problem: HttpProblem): void {
  res
    .status(problem.status)
    .set(problem.headers)
    .type('application/problem+json')
    .send(
      JSON.stringify({
        type: 'about:blank',
        title: problem.title,
        status: problem.status,
        detail: problem.message,
        ...(problem.errorCode ? { errorCode: problem.errorCode } : {}),
        ...(problem.errors ? { errors: problem.errors } : {}),
      }),
    );
}

/** Turns zod issues into the `errors` list of a 400, one entry per failing path. */
export function fieldsFromZod(error: z.ZodError, prefix = ''): ProblemField[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    return { path: prefix + (path || '(body)'), message: issue.message };
  });
}

/** A 400 listing every failing field. */
export function validationProblem(errors: ProblemField[]): HttpProblem {
  const names = errors.map((field) => field.path).join(', ');
  return new HttpProblem(400, `The request is not valid: ${names}.`, { errors });
}

/** Parses `input` with `schema` or throws the 400 that names each bad field. */
export function parseOrThrow<Schema extends z.ZodType>(schema: Schema, input: unknown, prefix = ''): z.output<Schema> {
  const result = schema.safeParse(input);
  if (!result.success) throw validationProblem(fieldsFromZod(result.error, prefix));
  return result.data;
}
