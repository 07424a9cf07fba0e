// The consumerUrl: the sandbox bank's sign-in page (GET) and its form (POST). A valid sign-in, a
// documented failing consumer or Cancel ends the verification and sends the consumer (303) to the
// returnURL; a wrong password only re-renders the form with an error, so the consumer may retry.
import type { Response } from 'express';
import express, { Router } from 'express';
import { z } from 'zod';
import type { ProviderContext } from './context.ts';
import { methodNotAllowed } from './error-handlers.ts';
import { expiredPage, finishedPage, signInPage, unknownLinkPage } from './consumer-html.ts';
import { BANK_CSS, BANK_CSS_PATH } from './consumer-styles.ts';
import type { ConsumerOutcome } from './sandbox-data.ts';
import { CONSUMER_CANCELLED, TEST_CONSUMERS } from './sandbox-data.ts';
import { secretsMatch } from './secrets.ts';
import type { Verification } from './state.ts';
import { completeVerification } from './verification-outcome.ts';
import { CONSUMER_FORM_LIMITS } from './limits.ts';

const SignInForm = z.object({
  t: z.string().max(200).default(''),
  username: z.string().max(200).default(''),
  password: z.string().max(200).default(''),
  action: z.enum(['signin', 'cancel']).default('signin'),
});

/** A strict CSP: no script at all, styles from this origin, forms only to here and the return origin. */
function contentSecurityPolicy(returnURL: string | undefined): string {
  // Chromium applies form-action to the redirect after the POST, so the returnURL's origin is allowed too.
  const formTargets = ["'self'", ...(returnURL ? [new URL(returnURL).origin] : [])].join(' ');
  return `default-src 'none'; style-src 'self'; form-action ${formTargets}; base-uri 'none'; frame-ancestors 'none'`;
}

function sendPage(res: Response, status: number, html: string, returnURL?: string): void {
  res
    .status(status)
    .set({
      'Cache-Control': 'no-store',
      // The consumerUrl carries its one-time token: never leak it in a Referer.
      'Referrer-Policy': 'no-referrer',
      'X-Content-Type-Options': 'nosniff',
      'Content-Security-Policy': contentSecurityPolicy(returnURL),
    })
    .type('html')
    .send(html);
}

type Lookup =
  { kind: 'unknown' } | { kind: 'expired'; language?: string } | { kind: 'open'; verification: Verification };

function lookUp(context: ProviderContext, verificationId: string, consumerToken: unknown): Lookup {
  const verification = context.state.verifications.get(verificationId);
  if (!verification || typeof consumerToken !== 'string' || !secretsMatch(consumerToken, verification.consumerToken)) {
    return { kind: 'unknown' };
  }
  if (verification.result || verification.expiresAt <= context.config.now())
    return { kind: 'expired', language: verification.request.transaction.language };
  return { kind: 'open', verification };
}

/** Sends the page for a link that cannot be used; true when it did. */
function answeredUnusable(res: Response, lookup: Lookup): lookup is Exclude<Lookup, { kind: 'open' }> {
  if (lookup.kind === 'unknown') sendPage(res, 404, unknownLinkPage());
  else if (lookup.kind === 'expired') sendPage(res, 410, expiredPage(lookup.language));
  return lookup.kind !== 'open';
}

/** The outcome the bank gives these credentials, or undefined when they are wrong. */
function outcomeFor(username: string, password: string): ConsumerOutcome | undefined {
  const consumer = TEST_CONSUMERS.find((candidate) => candidate.username === username);
  if (!consumer) return undefined;
  if (consumer.password !== null && !secretsMatch(password, consumer.password)) return undefined;
  return consumer.outcome;
}

export function consumerRouter(context: ProviderContext): Router {
  const router = Router();

  router.get(BANK_CSS_PATH, (_req, res) => {
    res.set('Cache-Control', 'public, max-age=3600').type('css').send(BANK_CSS);
  });

  router.get('/consumer/:verificationId', (req, res) => {
    const lookup = lookUp(context, req.params.verificationId, req.query.t);
    if (answeredUnusable(res, lookup)) return;
    sendPage(res, 200, renderSignIn(lookup.verification, context.config.merchantNames), lookup.verification.returnURL);
  });

  router.post(
    '/consumer/:verificationId',
    express.urlencoded({ extended: false, ...CONSUMER_FORM_LIMITS }),
    (req, res) => {
      const body = (req.body ?? {}) as Record<string, unknown>;
      // The token is read on its own, so a valid link with an otherwise odd form re-renders the form
      // instead of claiming the link is not valid.
      const lookup = lookUp(context, req.params.verificationId, body.t);
      if (answeredUnusable(res, lookup)) return;
      const { verification } = lookup;
      const form = SignInForm.safeParse(body);
      if (!form.success) {
        sendPage(res, 400, renderSignIn(verification, context.config.merchantNames, '', true), verification.returnURL);
        return;
      }
      const { action, username, password } = form.data;
      const outcome =
        action === 'cancel'
          ? ({ kind: 'failure', failure: CONSUMER_CANCELLED } as const)
          : outcomeFor(username.trim(), password);
      if (!outcome) {
        // 422, not 401: a 401 must carry a WWW-Authenticate challenge (RFC 9110 §15.5.2), which a form has not.
        sendPage(
          res,
          422,
          renderSignIn(verification, context.config.merchantNames, username, true),
          verification.returnURL,
        );
        return;
      }
      completeVerification(context, verification, outcome, username.trim());
      if (verification.returnURL) {
        res
          .set('Cache-Control', 'no-store')
          .set('Referrer-Policy', 'no-referrer')
          .redirect(303, verification.returnURL);
      } else {
        sendPage(res, 200, finishedPage(verification.request.transaction.language));
      }
    },
  );

  router.all(BANK_CSS_PATH, methodNotAllowed('GET', 'HEAD'));
  router.all('/consumer/:verificationId', methodNotAllowed('GET', 'HEAD', 'POST'));
  return router;
}

function renderSignIn(
  verification: Verification,
  merchantNames: Readonly<Record<string, string>>,
  username?: string,
  incorrect?: boolean,
): string {
  const { amount, currency, language } = verification.request.transaction;
  return signInPage({
    verificationId: verification.verificationId,
    consumerToken: verification.consumerToken,
    merchantName: Object.hasOwn(merchantNames, verification.request.merchant.merchantId)
      ? merchantNames[verification.request.merchant.merchantId]
      : undefined,
    amount,
    currency,
    language,
    username,
    incorrect,
  });
}
