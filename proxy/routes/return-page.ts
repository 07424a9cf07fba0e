// GET /connecting — the holding page the element opens in the new tab inside the click, before the bank's
// address is known: the consumer reads "Connecting to your bank…" instead of a blank, untitled tab, sees it
// working (a spinner, then "Still connecting…" if the provider is slow) and has a way back: "Back to
// checkout" closes the tab (the page's script, the same file as the return page's; the element then says
// the bank tab was closed and offers the bank's page again, or Cancel). The element navigates the tab on to the bank itself.
// GET /return/:returnRef — where the bank sends the consumer back (the returnURL, docs/UPSTREAM.md#d9-return-and-notification-urls). The URL carries
// the session's return reference, never its id (the provider sees this URL, and the id reads the
// outcome). The page says the step is done, tells the checkout tab over BroadcastChannel('obv-link')
// that *a* verification came back — no id, so other same-origin pages learn nothing they could use —
// and tries to close itself. Each waiting element then re-reads its own session. What the visit decides
// (a bound bank step's verdict among it) is verifications/return-visit.ts's; the pages are
// pages/return-page.ts's.
import express, { type Router } from 'express';
import { z } from 'zod';
import type { ProxyConfig } from '../config/schema.ts';
import { problem } from '../common/errors.ts';
import { carriesBankStepCookie } from '../http/bank-step-cookie.ts';
import { COMMON_PROBLEMS, type Operation, STORE_PROBLEMS, UNROUTED_PROBLEMS } from '../openapi/operation.ts';
import { connectingPage, RETURN_PAGE_CSP, RETURN_PAGE_SCRIPT, returnPage } from '../pages/return-page.ts';
import { RETURN_PROOF_PARAM } from '../verifications/return-proof.ts';
import type { Verifications } from '../verifications/verifications.ts';
import { consumerPageText } from '../words/consumer-pages.ts';

const lang = { description: "The page's language: Spanish for `es…`, English otherwise", schema: z.string() };
const html = (description: string) => ({ description, content: { 'text/html': z.string() } });

export const returnPageOperations: Operation[] = [
  {
    method: 'get',
    path: '/return-page.js',
    operationId: 'returnPageScript',
    summary: 'The script of the return and holding pages (a file, so their CSP needs no inline script)',
    caller: 'browser',
    responses: { 200: { description: 'The script', content: { 'text/javascript': z.string() } } },
    problems: { ...UNROUTED_PROBLEMS },
  },
  {
    method: 'get',
    path: '/connecting',
    operationId: 'connectingPage',
    summary: '"Connecting to your bank…": the new tab\'s page before the bank\'s address is known',
    caller: 'browser',
    query: { lang },
    responses: {
      200: html('The holding page (strict CSP; its one script is /return-page.js, for "Back to checkout")'),
    },
    problems: { ...UNROUTED_PROBLEMS },
  },
  {
    method: 'get',
    path: '/return/:returnRef',
    operationId: 'returnPage',
    summary: 'Where the bank sends the consumer back',
    description:
      'Says the bank step is done (or that the link was cancelled), tells the checkout tab over BroadcastChannel and closes itself. ' +
      'OBV_BIND_BANK_STEP: decides the bank step (docs/PROXY.md "Security notes"): the starting browser back from the bank (its binding ' +
      'cookie and the URL\'s `proof`) is done at once; with the cookie but without the proof, "Finishing…" (reloading) until its return ' +
      'can count; 403 to a browser without the binding cookie.',
    caller: 'browser',
    pathParams: { returnRef: z.string().meta({ description: "The session's return reference (never its id)" }) },
    query: {
      lang,
      [RETURN_PROOF_PARAM]: {
        description: "OBV_BIND_BANK_STEP: the one-time proof the returnURL carries, for the bank's redirect alone",
        schema: z.string(),
      },
    },
    responses: {
      200: html(
        '"Bank step complete", "Bank linking was cancelled", or (OBV_BIND_BANK_STEP) "Finishing your bank step…" (it reloads itself)',
      ),
      403: html(
        'OBV_BIND_BANK_STEP: the bank step was completed in a browser other than the starting one ("Finish in the browser where you ' +
          'started": nothing is ever released), it was confirmed by the starting browser and this is another, or it expired unconfirmed',
      ),
      404: html('An unknown reference, to a browser that asks for HTML'),
    },
    problems: {
      404: 'An unknown reference, to a client that does not ask for HTML.',
      ...STORE_PROBLEMS,
      ...COMMON_PROBLEMS,
    },
  },
];

export interface ReturnPageRouteDeps {
  verifications: Pick<Verifications, 'returnVisit'>;
  config: Pick<ProxyConfig, 'merchantName'>;
}

export function returnPageRouter(deps: ReturnPageRouteDeps): Router {
  const router = express.Router();
  const secureHeaders = {
    'content-security-policy': RETURN_PAGE_CSP,
    'cache-control': 'no-store',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  };

  router.get('/return-page.js', (_req, res) => {
    res
      .type('text/javascript')
      .set({ 'cache-control': 'public, max-age=300', 'x-content-type-options': 'nosniff' })
      .send(RETURN_PAGE_SCRIPT);
  });

  router.get('/connecting', (req, res) => {
    res
      .set(secureHeaders)
      .type('html')
      .send(connectingPage(consumerPageText(req.query.lang), deps.config.merchantName));
  });

  router.get('/return/:returnRef', async (req, res) => {
    res.set(secureHeaders);
    const text = consumerPageText(req.query.lang);
    const shown = await deps.verifications.returnVisit(String(req.params.returnRef), {
      carriesBinding: (record) => carriesBankStepCookie(req, record),
      proof: req.query[RETURN_PROOF_PARAM],
    });
    // A consumer's tab gets a page it can read; anything that does not ask for HTML gets the usual problem.
    if (shown === 'unknown' && req.accepts(['html', 'application/problem+json', 'json']) !== 'html')
      throw problem('not-found', 'No verification session has this id.');
    const { status, html } = returnPage(shown, text);
    res.status(status).type('html').send(html);
  });
  return router;
}
