// What a route module declares about each of its routes for the OpenAPI document (document.ts): the
// same zod schemas the route validates its input with, and zod schemas of what it answers. A route
// module exports its operations next to its router; operations.ts lists every module's, and a test
// fails when the app has a route the list does not describe (or the other way round).
import { z } from 'zod';
import type { ProblemBody } from '../common/errors.ts';
import { describes } from '../common/validation.ts';

/** Who calls the route; becomes the operation's tag. */
export type Caller = 'browser' | 'merchant server' | 'provider' | 'operations';

/** Media types the proxy answers with; problems (application/problem+json) are listed apart. */
export type MediaType = 'application/json' | 'text/html' | 'text/javascript';

export interface ResponseSpec {
  description: string;
  /** Body schema per media type (a string schema for HTML and JavaScript). */
  content?: Partial<Record<MediaType, z.ZodType>>;
  /** Response headers the route always sets with this answer. */
  headers?: Record<string, { description: string; schema: z.ZodType }>;
}

export interface Operation {
  method: 'get' | 'post' | 'delete';
  /** The path exactly as the router declares it (`/sessions/:sessionId`), relative to the mount path. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  caller: Caller;
  /**
   * `merchantApiKey`: `Authorization: Bearer OBV_MERCHANT_API_KEY`. Unset: the route takes no credential
   * (the browser's, the provider's and the operations routes check other things), `security: []`.
   */
  security?: 'merchantApiKey';
  /** Schema of each `:name` in `path` (default: any non-empty string). */
  pathParams?: Record<string, z.ZodType>;
  query?: Record<string, { description: string; schema: z.ZodType }>;
  headers?: Record<string, { description: string; schema: z.ZodType; required?: boolean }>;
  body?: { description?: string; contentType: 'application/json'; schema: z.ZodType };
  /** Answers other than problems, by status (`201`) or range (`4XX`). */
  responses: Record<string, ResponseSpec>;
  /** Statuses this route may answer with application/problem+json, with what each means here. */
  problems: Record<number, string>;
}

/** RFC 9457 problem details as the proxy sends them (errors.ts `ProblemBody`). */
export const ProblemSchema = z
  .looseObject({
    type: z
      .string()
      .regex(/^urn:obv-link:problem:[a-z0-9-]+$/)
      .meta({ description: '`urn:obv-link:problem:{slug}`' }),
    title: z.string(),
    status: z.int().min(400).max(599),
    detail: z.string(),
    errors: z
      .array(
        z.object({
          path: z.string().meta({ description: 'Dotted path of the field (`consumer.email`), or a header name' }),
          message: z.string(),
        }),
      )
      .min(1)
      .optional()
      .meta({ description: 'Every field at fault' }),
  })
  .meta({
    description: 'RFC 9457 problem details; a kind may add extension members (`payment` on `order-already-paid`)',
  });

describes<ProblemBody>()(ProblemSchema);

/** Problems every route under the mount path can answer. */
export const COMMON_PROBLEMS = {
  500: 'Something failed in the proxy (the cause is in its log).',
} as const;

/**
 * The 4XX of a route that answers every request it routes: a request it does not route (another method,
 * a longer path) gets the `not-found` problem, as every unknown route under the mount path does.
 */
export const UNROUTED_PROBLEMS = {
  404: "Not this route's own answer: another method or a longer path is not routed, and gets the `not-found` problem as every unknown route does.",
} as const;

/** Problems of a route that reads a JSON body (express.json and the route's checks). */
export const JSON_BODY_PROBLEMS = {
  400: 'A field is missing or invalid (`errors` names each one), or the body is not JSON.',
  413: 'The body is larger than the limit.',
  415: 'The body is not `application/json`.',
} as const;

/** Problems of a route that reads or writes the session store. */
export const STORE_PROBLEMS = {
  503: 'The session store (Redis) cannot be reached (`session-store-unavailable`), or the disk holding the SQLite storage is full (`storage-full`); `Retry-After` says when to try again.',
} as const;

/** Problems of the routes behind the merchant API key. */
export const MERCHANT_AUTH_PROBLEMS = {
  401: 'No `Authorization: Bearer <OBV_MERCHANT_API_KEY>`, or a wrong key.',
  429: 'Too many wrong keys from this address.',
} as const;
