// GET /openapi.json — the proxy's OpenAPI 3.1 document (openapi/document.ts), built once from the zod
// schemas the routes validate with. Public: it describes the API and carries no secret or capability.
import express, { type Router } from 'express';
import { z } from 'zod';
import { type Operation, UNROUTED_PROBLEMS } from '../openapi/operation.ts';

export const openApiOperations: Operation[] = [
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'openApiDocument',
    summary: 'This document',
    caller: 'merchant server',
    responses: {
      200: {
        description: 'The OpenAPI 3.1 document of every route under the mount path',
        content: {
          'application/json': z.looseObject({
            openapi: z.string().regex(/^3\.1\./),
            info: z.looseObject({}),
            paths: z.looseObject({}),
          }),
        },
      },
    },
    problems: { ...UNROUTED_PROBLEMS },
  },
];

export function openApiRouter(document: object): Router {
  const router = express.Router();
  const body = JSON.stringify(document);
  router.get('/openapi.json', (_req, res) => {
    // Readable from any origin, so API tools in a browser can load it.
    res.set({ 'cache-control': 'public, max-age=300', 'access-control-allow-origin': '*' }).type('json').send(body);
  });
  return router;
}
