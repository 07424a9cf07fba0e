import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { createProvider } from '../../../sandbox/index.ts';
import {
  VERIFICATION_PATH,
  postJson,
  requestToken,
  startTestProvider,
  startVerification,
  startWebhookReceiver,
  submitConsumerForm,
  verificationBody,
} from './helpers.ts';

const RETURN_URL = 'http://127.0.0.1:9/merchant/return/session-1';

describe('consumer page (consumerUrl)', () => {
  test('serves an English sign-in page with labelled fields, both buttons and a strict CSP', async (t) => {
    const provider = await startTestProvider(t);
    const { consumerUrl, verificationId } = await startVerification(
      provider,
      verificationBody({ returnURL: RETURN_URL }),
    );
    const response = await fetch(consumerUrl);
    assert.equal(response.status, 200);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /form-action 'self' http:\/\/127\.0\.0\.1:9(;|$)/);
    assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
    const html = await response.text();
    assert.match(html, /<html lang="en">/);
    assert.match(html, /<h1>Sign in to Sandbox Federal Bank<\/h1>/);
    assert.match(html, /<label for="username">Username<\/label>/);
    assert.match(html, /<label for="password">Password<\/label>/);
    assert.match(html, /<button type="submit" class="primary" name="action" value="signin">Sign in<\/button>/);
    assert.match(html, /value="cancel" formnovalidate>Cancel<\/button>/);
    assert.match(html, new RegExp(`<form method="post" action="${verificationId}">`));
    assert.doesNotMatch(html, /<script/i);
    assert.doesNotMatch(html, /role="alert"/);
  });

  test("shows a US consumer's amount as one, in Spanish too ($49.99, not Spain's 49,99 US$)", async (t) => {
    const provider = await startTestProvider(t);
    const spanish = verificationBody(
      { returnURL: RETURN_URL },
      { transaction: { amount: '49.99', currency: 'USD', product: 'OBV', language: 'es-US' } },
    );
    const html = await (await fetch((await startVerification(provider, spanish)).consumerUrl)).text();
    assert.match(html, /<html lang="es">/);
    assert.match(html, /\$49\.99/);
    assert.doesNotMatch(html, /49,99/);
  });

  test('serves the stylesheet the page links to', async (t) => {
    const provider = await startTestProvider(t);
    const response = await fetch(`${provider.url}/consumer-assets/bank.css`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/css/);
  });

  test('redirects with 303 to the returnURL after a successful sign-in and notifies the success', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t);
    const body = verificationBody({ returnURL: RETURN_URL, notificationURL: receiver.url });
    const { consumerUrl, verificationId } = await startVerification(provider, body);
    const response = await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'pass_good' });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), RETURN_URL);
    await provider.notificationsSettled();
    const notification = JSON.parse(receiver.received[0]?.body ?? '{}');
    assert.equal(notification.verificationId, verificationId);
    assert.equal(notification.verificationStatus, 'SUCCESS');
    assert.match(notification.account.accountToken, /^acct_/);
    assert.equal(notification.account.accountLabel, 'Checking ••••4321');
    assert.equal(notification.account.fiName, 'Sandbox Federal Bank');
    assert.equal(notification.account.fiAccountType, 'CHECKING');
    assert.deepEqual(notification.merchant, {
      merchantId: 'merchant-1',
      merchantUserId: 'user-42',
      merchantTransactionId: 'order-1001',
    });
    assert.deepEqual(notification.transaction, { amount: '49.99', currency: 'USD', product: 'OBV', language: 'en-US' });
  });

  test('links a savings account for user_savings', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    const { consumerUrl } = await startVerification(provider);
    assert.equal(
      (await submitConsumerForm(consumerUrl, { username: 'user_savings', password: 'pass_good' })).status,
      303,
    );
    await provider.notificationsSettled();
    const notification = JSON.parse(receiver.received[0]?.body ?? '{}');
    assert.equal(notification.account.fiAccountType, 'SAVINGS');
  });

  const failures = [
    {
      name: 'user_bad',
      fields: { username: 'user_bad', password: 'anything' },
      code: 'ACCOUNT_NOT_VERIFIED',
      message: 'The bank could not verify this account.',
    },
    {
      name: 'user_locked',
      fields: { username: 'user_locked', password: '' },
      code: 'ACCOUNT_LOCKED',
      message: 'This account is locked. Contact your bank.',
    },
    {
      name: 'the Cancel button',
      fields: { action: 'cancel' as const },
      code: 'CONSUMER_CANCELLED',
      message: 'You cancelled the verification at your bank.',
    },
  ];
  for (const failure of failures) {
    test(`notifies FAILURE ${failure.code} for ${failure.name} and redirects to the returnURL`, async (t) => {
      const receiver = await startWebhookReceiver(t);
      const provider = await startTestProvider(t, {
        defaultNotificationURL: receiver.url,
        defaultReturnURL: RETURN_URL,
      });
      const { consumerUrl } = await startVerification(provider);
      const response = await submitConsumerForm(consumerUrl, failure.fields);
      assert.equal(response.status, 303);
      assert.equal(response.headers.get('location'), RETURN_URL);
      await provider.notificationsSettled();
      const notification = JSON.parse(receiver.received[0]?.body ?? '{}');
      assert.equal(notification.verificationStatus, 'FAILURE');
      assert.deepEqual(notification.account, {});
      assert.equal(notification.errorCode, failure.code);
      assert.equal(notification.errorMessage, failure.message);
    });
  }

  test('shows "Incorrect username or password" in an alert for a wrong password and lets the consumer retry', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const provider = await startTestProvider(t, { defaultNotificationURL: receiver.url });
    const { consumerUrl } = await startVerification(provider);
    const wrong = await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'nope' });
    assert.equal(wrong.status, 422, 'not 401: that would need a WWW-Authenticate challenge');
    const html = await wrong.text();
    assert.match(
      html,
      /<p class="error" role="alert" id="form-error" tabindex="-1" autofocus>Incorrect username or password<\/p>/,
    );
    assert.match(html, /value="user_good" aria-invalid="true"/);
    assert.equal(provider.stats.notificationAttempts, 0);
    const retry = await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'pass_good' });
    assert.equal(retry.status, 303);
    await provider.notificationsSettled();
    assert.equal(receiver.received.length, 1);
  });

  test('re-renders the form (400) for a valid link with an unknown action, without ending the verification', async (t) => {
    const provider = await startTestProvider(t);
    const { consumerUrl } = await startVerification(provider);
    const url = new URL(consumerUrl);
    const form = new URLSearchParams({
      t: url.searchParams.get('t') ?? '',
      username: 'user_good',
      password: 'pass_good',
      action: 'delete',
    });
    const response = await fetch(`${url.origin}${url.pathname}`, { method: 'POST', redirect: 'manual', body: form });
    assert.equal(response.status, 400);
    assert.match(await response.text(), /<label for="username">Username<\/label>/);
    assert.equal(provider.stats.notificationAttempts, 0);
    assert.equal((await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'pass_good' })).status, 303);
  });

  test('escapes what it echoes back into the page', async (t) => {
    const provider = await startTestProvider(t);
    const { consumerUrl } = await startVerification(provider);
    const response = await submitConsumerForm(consumerUrl, { username: '"><script>alert(1)</script>', password: 'x' });
    const html = await response.text();
    assert.doesNotMatch(html, /<script>/);
    assert.match(html, /value="&quot;&gt;&lt;script&gt;alert\(1\)&lt;\/script&gt;"/);
  });

  test('shows the expired page (410) when a completed consumerUrl is opened or submitted again', async (t) => {
    const provider = await startTestProvider(t);
    const { consumerUrl } = await startVerification(provider);
    assert.equal((await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'pass_good' })).status, 303);
    const reopened = await fetch(consumerUrl);
    assert.equal(reopened.status, 410);
    assert.match(await reopened.text(), /This link has expired/);
    assert.equal((await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'pass_good' })).status, 410);
  });

  test('shows the expired page (410) once the consumerUrl outlived its lifetime', async (t) => {
    let now = Date.now();
    const provider = await startTestProvider(t, { consumerUrlTtlSeconds: 60, now: () => now });
    const { consumerUrl } = await startVerification(provider);
    now += 59_000;
    assert.equal((await fetch(consumerUrl)).status, 200);
    now += 1_000;
    const response = await fetch(consumerUrl);
    assert.equal(response.status, 410);
    assert.match(await response.text(), /This link has expired/);
    assert.equal((await submitConsumerForm(consumerUrl, { username: 'user_good', password: 'pass_good' })).status, 410);
    assert.equal(provider.stats.notificationAttempts, 0);
  });

  test('keeps a consumerUrl usable for 15 minutes by default, then shows the expired page', async (t) => {
    let now = Date.now();
    const provider = await startTestProvider(t, { now: () => now });
    const { consumerUrl } = await startVerification(provider);
    now += 15 * 60 * 1000 - 1;
    assert.equal((await fetch(consumerUrl)).status, 200);
    now += 1;
    assert.equal((await fetch(consumerUrl)).status, 410);
  });

  test('answers 405 with Allow for a method the consumer page does not take', async (t) => {
    const provider = await startTestProvider(t);
    const { consumerUrl } = await startVerification(provider);
    const response = await fetch(consumerUrl, { method: 'DELETE' });
    assert.equal(response.status, 405);
    assert.equal(response.headers.get('allow'), 'GET, HEAD, POST');
  });

  test('refuses (404) a consumerUrl whose one-time token is wrong or missing', async (t) => {
    const provider = await startTestProvider(t);
    const { consumerUrl } = await startVerification(provider);
    const url = new URL(consumerUrl);
    url.searchParams.set('t', 'guessed');
    assert.equal((await fetch(url)).status, 404);
    url.searchParams.delete('t');
    assert.equal((await fetch(url)).status, 404);
    assert.equal(
      (await submitConsumerForm(consumerUrl, { t: 'guessed', username: 'user_good', password: 'pass_good' })).status,
      404,
    );
    assert.equal((await fetch(consumerUrl)).status, 200, 'a wrong guess does not burn the real link');
  });

  test('works with the app mounted under a path: consumerUrl, stylesheet and form stay under it', async (t) => {
    const provider = createProvider({ defaultReturnURL: RETURN_URL, defaultNotificationURL: 'http://127.0.0.1:9/n' });
    const outer = express().use('/bank', provider.app);
    const server = outer.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    t.after(() => {
      provider.close();
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    });
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bank`;
    const token = ((await (await requestToken(base)).json()) as { access_token: string }).access_token;
    const { consumerUrl } = (await (
      await postJson(`${base}${VERIFICATION_PATH}`, token, verificationBody())
    ).json()) as { consumerUrl: string };
    assert.ok(consumerUrl.startsWith(`${base}/consumer/`), consumerUrl);
    const html = await (await fetch(consumerUrl)).text();
    const stylesheet = new URL(/<link rel="stylesheet" href="([^"]+)">/.exec(html)?.[1] ?? '', consumerUrl);
    assert.equal((await fetch(stylesheet)).headers.get('content-type')?.split(';')[0], 'text/css');
    const action = new URL(/<form method="post" action="([^"]+)">/.exec(html)?.[1] ?? '', consumerUrl);
    const form = new URLSearchParams({
      t: new URL(consumerUrl).searchParams.get('t') ?? '',
      username: 'user_good',
      password: 'pass_good',
      action: 'signin',
    });
    const response = await fetch(action, { method: 'POST', redirect: 'manual', body: form });
    assert.equal(response.status, 303);
    assert.equal(response.headers.get('location'), RETURN_URL);
  });

  test('shows a closing page instead of redirecting when no returnURL is known', async (t) => {
    const provider = await startTestProvider(t, { defaultReturnURL: undefined });
    const { consumerUrl } = await startVerification(provider);
    const response = await submitConsumerForm(consumerUrl, { action: 'cancel' });
    assert.equal(response.status, 200);
    assert.match(await response.text(), /You can close this window/);
  });
});
