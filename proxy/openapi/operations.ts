// Every route's operations, in the document's order. A new route module exports its `Operation[]` and
// adds one line here; test/node/proxy/openapi.test.ts fails while a mounted route is missing.
import type { Operation } from './operation.ts';
import { eventsOperations, eventWebhooks } from '../routes/events.ts';
import { linkSessionsOperations } from '../routes/link-sessions.ts';
import { linksOperations } from '../routes/links.ts';
import { notificationsOperations } from '../routes/notifications.ts';
import { openApiOperations } from '../routes/openapi.ts';
import { readinessOperations } from '../routes/readiness.ts';
import { returnPageOperations } from '../routes/return-page.ts';
import { hostedPageOperations } from '../routes/hosted-page.ts';
import { savedAccountsOperations } from '../routes/saved-accounts.ts';
import { sessionsOperations } from '../routes/sessions.ts';
import { transactionsOperations } from '../routes/transactions.ts';
import { verificationsOperations } from '../routes/verifications.ts';

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
  ...eventsOperations,
  ...readinessOperations,
  ...openApiOperations,
];

/** What the proxy sends to the merchant's server (the document's `webhooks`). */
export const WEBHOOKS: readonly Operation[] = [...eventWebhooks];
