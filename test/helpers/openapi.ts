// Checks real HTTP answers against the proxy's OpenAPI document (ajv 8, JSON Schema 2020-12 with
// formats), and lists the routes an Express app has mounted, to compare with the document's paths.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import * as ajvFormats from 'ajv-formats';
import type { Express } from 'express';

// ajv-formats is CommonJS with `exports.default`: under Node's ESM loader the function is `default.default`.
const addFormats = ajvFormats.default.default;

type Json = Record<string, unknown>;

/** One answer as a client saw it; `path` as requested, mount path and query included. */
export interface Exchange {
  method: string;
  path: string;
  status: number;
  contentType: string;
  body: string;
}

export interface CheckedExchange {
  /** The document's operationId, when the path and method match one. */
  operationId: string | undefined;
  /** Why the answer does not match the document (empty when it does). */
  errors: string[];
}

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  operation: Json;
}

export interface ResponseChecker {
  check(exchange: Exchange): CheckedExchange;
  /** Why a JSON body the proxy sent to the merchant (the document's webhook `name`) does not match (empty when it does). */
  checkWebhook(name: string, body: string): string[];
  /** Every operationId in the document. */
  operationIds(): string[];
}

/** A checker for answers of the routes `document` describes, under `mountPath`. */
export function responseChecker(document: Json, mountPath: string): ResponseChecker {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
  addFormats(ajv);
  const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
  const compiled = new Map<Json, ValidateFunction>();
  const validator = (schema: Json): ValidateFunction => {
    const resolved =
      typeof schema.$ref === 'string' ? schemas[schema.$ref.replace('#/components/schemas/', '')]! : schema;
    let validate = compiled.get(resolved);
    if (!validate) compiled.set(resolved, (validate = ajv.compile(resolved)));
    return validate;
  };
  const routes: Route[] = Object.entries(document.paths as Record<string, Record<string, Json>>).flatMap(
    ([template, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({
        method: method.toUpperCase(),
        template,
        pattern: new RegExp(`^${mountPath}${template.replace(/\{[^}]+\}/g, '[^/]+').replace(/\./g, '\\.')}$`),
        operation,
      })),
  );
  // Compiling every schema up front: a schema ajv cannot compile fails here, not on first use.
  for (const { operation } of routes) {
    for (const answer of Object.values(
      operation.responses as Record<string, { content?: Record<string, { schema: Json }> }>,
    )) {
      for (const media of Object.values(answer.content ?? {})) validator(media.schema);
    }
  }

  return {
    operationIds: () => routes.map((route) => String(route.operation.operationId)),
    checkWebhook(name, body) {
      const webhook = (
        document.webhooks as Record<string, { post: { requestBody: { content: Record<string, { schema: Json }> } } }>
      )[name];
      if (!webhook) return [`no webhook ${name} in the document`];
      const validate = validator(webhook.post.requestBody.content['application/json']!.schema);
      return validate(JSON.parse(body))
        ? []
        : (validate.errors ?? []).map((error) => `${name}: ${error.instancePath || '/'} ${error.message ?? ''}`);
    },
    check(exchange) {
      const path = exchange.path.split('?')[0]!;
      const route = routes.find((candidate) => candidate.method === exchange.method && candidate.pattern.test(path));
      if (!route)
        return { operationId: undefined, errors: [`${exchange.method} ${path}: no operation in the document`] };
      const where = `${exchange.method} ${route.template} → ${exchange.status}`;
      const responses = route.operation.responses as Record<string, { content?: Record<string, { schema: Json }> }>;
      const answer =
        responses[String(exchange.status)] ?? responses[`${String(exchange.status)[0]}XX`] ?? responses.default;
      const operationId = String(route.operation.operationId);
      if (!answer) return { operationId, errors: [`${where}: status not in the document`] };
      const mediaType = exchange.contentType.split(';')[0]!.trim();
      const media = answer.content?.[mediaType];
      if (!media) {
        const documented = Object.keys(answer.content ?? {});
        return documented.length === 0 && exchange.body === ''
          ? { operationId, errors: [] }
          : {
              operationId,
              errors: [
                `${where}: content type ${mediaType || '(none)'} not in the document (${documented.join(', ')})`,
              ],
            };
      }
      let body: unknown = exchange.body;
      if (/json$/.test(mediaType)) {
        try {
          body = JSON.parse(exchange.body);
        } catch {
          return { operationId, errors: [`${where}: the body is not JSON`] };
        }
      }
      const validate = validator(media.schema);
      if (validate(body)) return { operationId, errors: [] };
      return {
        operationId,
        errors: (validate.errors ?? []).map(
          (error) =>
            `${where} (${mediaType}): ${error.instancePath || '/'} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
        ),
      };
    },
  };
}

interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  slash?: boolean;
}

/**
 * Every `METHOD /path` the app routes (Express 5 router stacks, routers mounted without a path
 * followed), in the document's form (`/sessions/{sessionId}`). Middleware mounted on a path (CORS)
 * is not a route.
 */
export function mountedRoutes(app: Express): string[] {
  const found: string[] = [];
  const walk = (stack: Layer[]) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const method of Object.keys(layer.route.methods))
          found.push(`${method.toUpperCase()} ${layer.route.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
      } else if (layer.handle?.stack) {
        // A router mounted on a path would prefix its routes: not done by the proxy today, so say so loudly.
        if (!layer.slash) throw new Error('mountedRoutes: a router mounted on a path; add its prefix here');
        walk(layer.handle.stack);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack);
  return found.sort();
}
