// Every route's operations, in the document's order. A new route module exports its `Operation[]` and
// adds one line here; test/node/proxy/openapi.test.ts fails while a mounted route is missing.
import type { Operation } from '../openapi/operation.ts';
import { openApiDocument, type JsonSchema } from '../openapi/document.ts';
import { eventsOperations, eventWebhooks } from './events.ts';
import { linkSessionsOperations } from './link-sessions.ts';
import { linksOperations } from './links.ts';
import { usersOperations } from './users.ts';
import { notificationsOperations } from './notifications.ts';
import { openApiOperations } from './openapi.ts';
import { readinessOperations } from './readiness.ts';
import { returnPageOperations } from './return-page.ts';
import { hostedPageOperations } from './hosted-page.ts';
import { savedAccountsOperations } from './saved-accounts.ts';
import { sessionsOperations } from './sessions.ts';
import { transactionsOperations } from './transactions.ts';
import { verificationsOperations } from './verifications.ts';

export const OPERATIONS: readonly Operation[] = [
  ...verificationsOperations,
  ...sessionsOperations,
  ...savedAccountsOperations,
  ...returnPageOperations,
  ...hostedPageOperations,
  ...notificationsOperations,
  ...linkSessionsOperations,
  ...transactionsOperations,
  ...linksOperations,
  ...usersOperations,
  ...eventsOperations,
  ...readinessOperations,
  ...openApiOperations,
];

/** What the proxy sends to the merchant's server (the document's `webhooks`). */
export const WEBHOOKS: readonly Operation[] = [...eventWebhooks];

/** The proxy's OpenAPI document, its routes at `serverUrl` (`{publicUrl}{mountPath}`, or the mount path alone). */
export function proxyOpenApiDocument(serverUrl: string): JsonSchema {
  return openApiDocument({ serverUrl, operations: OPERATIONS, webhooks: WEBHOOKS });
}
