// The proxy's OpenAPI 3.1 document, generated from the operations the route modules declare
// (routes/operations.ts lists them) with zod's own JSON Schema output (draft 2020-12, OpenAPI 3.1's dialect): request
// schemas as the routes parse them (their input), response schemas as the routes answer (their output).
import { z } from 'zod';
import { packageVersion } from '../common/package-version.ts';
import { type Caller, type Operation, ProblemSchema, type ResponseSpec } from './operation.ts';

export type JsonSchema = Record<string, unknown>;

const PROBLEM_REF = { $ref: '#/components/schemas/Problem' };

const TAGS: Record<Caller, string> = {
  browser: "Called by the <obv-link-account> element, or the consumer's browser",
  'merchant server': "Called by the merchant's server, never by a page",
  provider: 'Called by the OBV provider',
  operations: 'Load balancers and monitoring',
};

function jsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'throw',
  }) as JsonSchema;
  return rest;
}

/** `/sessions/:sessionId` → `/sessions/{sessionId}`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parameters(operation: Operation): JsonSchema[] {
  const pathNames = [...operation.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((match) => match[1]!);
  return [
    ...pathNames.map((name) => ({
      name,
      in: 'path',
      required: true,
      schema: jsonSchema(operation.pathParams?.[name] ?? z.string().min(1), 'input'),
    })),
    ...Object.entries(operation.query ?? {}).map(([name, { description, schema }]) => ({
      name,
      in: 'query',
      required: false,
      description,
      schema: jsonSchema(schema, 'input'),
    })),
    ...Object.entries(operation.headers ?? {}).map(([name, { description, schema, required }]) => ({
      name,
      in: 'header',
      required: required ?? false,
      description,
      schema: jsonSchema(schema, 'input'),
    })),
  ];
}

function response(spec: ResponseSpec): JsonSchema {
  const answer: JsonSchema = { description: spec.description };
  if (spec.headers) {
    answer.headers = Object.fromEntries(
      Object.entries(spec.headers).map(([name, { description, schema }]) => [
        name,
        { description, schema: jsonSchema(schema, 'output') },
      ]),
    );
  }
  if (spec.content) {
    answer.content = Object.fromEntries(
      Object.entries(spec.content).map(([type, schema]) => [type, { schema: jsonSchema(schema, 'output') }]),
    );
  }
  return answer;
}

/** The route's own answers, then its problems (merged into a status that also has another answer). */
function responses(operation: Operation): JsonSchema {
  const all: Record<string, JsonSchema> = Object.fromEntries(
    Object.entries(operation.responses).map(([status, spec]) => [status, response(spec)]),
  );
  for (const [status, description] of Object.entries(operation.problems)) {
    const problemContent = { 'application/problem+json': { schema: PROBLEM_REF } };
    const existing = all[status];
    all[status] = existing
      ? {
          ...existing,
          description: `${existing.description as string}; or a problem: ${description}`,
          content: { ...(existing.content as object), ...problemContent },
        }
      : { description, content: problemContent };
  }
  return all;
}

function operationObject(operation: Operation): JsonSchema {
  const params = parameters(operation);
  return {
    operationId: operation.operationId,
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    tags: [operation.caller],
    // Declared on every operation, so none reads as an oversight: `[]` is "no credential".
    security: operation.security ? [{ [operation.security]: [] }] : [],
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(operation.body
      ? {
          requestBody: {
            required: true,
            ...(operation.body.description ? { description: operation.body.description } : {}),
            content: { [operation.body.contentType]: { schema: jsonSchema(operation.body.schema, 'input') } },
          },
        }
      : {}),
    responses: responses(operation),
  };
}

export interface OpenApiDocumentOptions {
  /** Where the routes are: `{publicUrl}{mountPath}`, or the mount path alone (relative to the document). */
  serverUrl: string;
  operations: readonly Operation[];
  /** Requests the proxy makes to the merchant's server. */
  webhooks: readonly Operation[];
}

export function openApiDocument({ serverUrl, operations, webhooks }: OpenApiDocumentOptions): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const operation of operations)
    (paths[openApiPath(operation.path)] ??= {})[operation.method] = operationObject(operation);
  return {
    openapi: '3.1.1',
    info: {
      title: 'obv-link proxy',
      version: packageVersion(),
      description:
        "The self-hosted proxy of obv-link: the routes the <obv-link-account> element, the merchant's server and the OBV provider call. " +
        "Every error is application/problem+json (RFC 9457). The element's WebSocket, {mount}/ws, is described in docs/CONTRACTS.md §2.",
      license: { name: 'MIT', identifier: 'MIT' },
    },
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    servers: [{ url: serverUrl }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    webhooks: Object.fromEntries(
      webhooks.map((webhook) => [webhook.operationId, { [webhook.method]: operationObject(webhook) }]),
    ),
    components: {
      schemas: { Problem: jsonSchema(ProblemSchema, 'output') },
      securitySchemes: {
        merchantApiKey: {
          type: 'http',
          scheme: 'bearer',
          description: "One of OBV_MERCHANT_API_KEYS (or OBV_MERCHANT_API_KEY): only the merchant's server holds it",
        },
      },
    },
  };
}
