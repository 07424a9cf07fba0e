// The bank page in a real Chromium: what a consumer sees and does, through to the merchant's returnURL.
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { TestContext } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../../../scripts/chromium.ts';
import { startTestProvider, startVerification, startWebhookReceiver, verificationBody } from './helpers.ts';

/** A merchant return page on port 0, so the browser's redirect lands somewhere real. */
async function startReturnPage(t: TestContext): Promise<string> {
  const server = createServer((_req, res) => {
    res
      .writeHead(200, { 'content-type': 'text/html' })
      .end('<!doctype html><title>Returned</title><h1>Back at the merchant</h1>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/obv/return/session-1`;
}

interface AxeViolation {
  id: string;
  help: string;
  nodes: Array<{ target: unknown }>;
}

/**
 * Runs axe-core's WCAG 2.1 A/AA rules on the page and returns the violations. The page's CSP forbids
 * scripts, so axe is evaluated through the DevTools protocol (which the CSP does not govern).
 */
async function axeViolations(page: Page): Promise<string[]> {
  const source = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source);
  const violations = await page.evaluate(async () => {
    const { axe } = window as unknown as {
      axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> };
    };
    const results = await axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return results.violations;
  });
  return violations.map(
    (violation) => `${violation.id}: ${violation.help} (${JSON.stringify(violation.nodes.map((node) => node.target))})`,
  );
}

describe('consumer page in Chromium', () => {
  let browser: Browser;
  before(async () => {
    browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS, headless: true });
  });
  after(() => browser.close());

  test('a consumer signs in with the labelled fields and lands on the returnURL; the success is notified', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const returnURL = await startReturnPage(t);
    const provider = await startTestProvider(t);
    const { consumerUrl } = await startVerification(
      provider,
      verificationBody({ returnURL, notificationURL: receiver.url }),
    );
    const page = await browser.newPage({ viewport: { width: 800, height: 720 } });
    t.after(() => page.close());
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') blocked.push(message.text());
    });

    await page.goto(consumerUrl);
    await page.getByRole('heading', { name: 'Sign in to Sandbox Federal Bank' }).waitFor();
    await mkdir('test-results', { recursive: true });
    await page.screenshot({ path: 'test-results/provider-consumer-page.png', fullPage: true });

    assert.deepEqual(await axeViolations(page), [], 'the sign-in page passes axe WCAG 2.1 AA');

    await page.getByLabel('Username').fill('user_good');
    await page.getByLabel('Password').fill('pass_good');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(returnURL);
    assert.equal(await page.getByRole('heading').textContent(), 'Back at the merchant');
    assert.deepEqual(blocked, [], 'the CSP blocked nothing (stylesheet, form post, redirect)');

    await provider.notificationsSettled();
    const notification = JSON.parse(receiver.received[0]?.body ?? '{}') as { verificationStatus: string };
    assert.equal(notification.verificationStatus, 'SUCCESS');
  });

  test('a wrong password shows an alert and keeps the consumer on the page; Cancel then ends as CONSUMER_CANCELLED', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const returnURL = await startReturnPage(t);
    const provider = await startTestProvider(t);
    const { consumerUrl } = await startVerification(
      provider,
      verificationBody({ returnURL, notificationURL: receiver.url }),
    );
    const page = await browser.newPage();
    t.after(() => page.close());

    await page.goto(consumerUrl);
    await page.getByLabel('Username').fill('user_good');
    await page.getByLabel('Password').fill('wrong');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor();
    assert.equal((await alert.textContent())?.trim(), 'Incorrect username or password');
    assert.equal(await page.getByLabel('Username').inputValue(), 'user_good');
    await page.screenshot({ path: 'test-results/provider-consumer-page-error.png', fullPage: true });
    assert.deepEqual(await axeViolations(page), [], 'the page with its error passes axe WCAG 2.1 AA');

    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.waitForURL(returnURL);
    await provider.notificationsSettled();
    const notification = JSON.parse(receiver.received[0]?.body ?? '{}') as { errorCode: string };
    assert.equal(notification.errorCode, 'CONSUMER_CANCELLED');

    await page.goto(consumerUrl);
    await page.getByRole('heading', { name: 'This link has expired' }).waitFor();
    assert.deepEqual(await axeViolations(page), [], 'the expired page passes axe WCAG 2.1 AA');
  });

  /** WCAG contrast of two computed `rgb(…)` colours. */
  function contrast(a: string, b: string): number {
    const luminance = (color: string) => {
      const [r, g, bl] = (color.match(/[\d.]+/g) ?? []).slice(0, 3).map((part) => {
        const c = Number(part) / 255;
        return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
    };
    const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x);
    return (light! + 0.05) / (dark! + 0.05);
  }

  test('field borders and the focus ring stand out at least 3:1 from the card', async (t) => {
    const provider = await startTestProvider(t);
    const { consumerUrl } = await startVerification(provider);
    const page = await browser.newPage();
    t.after(() => page.close());
    await page.goto(consumerUrl);
    await page.keyboard.press('Tab'); // keyboard focus: :focus-visible
    await page.getByLabel('Username').focus();
    const colours = await page.evaluate(() => {
      const field = getComputedStyle(document.querySelector('#password')!);
      const focused = getComputedStyle(document.activeElement!);
      const card = getComputedStyle(document.querySelector('.card')!);
      return {
        border: field.borderTopColor,
        ring: focused.outlineColor,
        ringStyle: focused.outlineStyle,
        card: card.backgroundColor,
      };
    });
    assert.notEqual(colours.ringStyle, 'none');
    assert.ok(contrast(colours.border, colours.card) >= 3, `field border ${colours.border} on ${colours.card}`);
    assert.ok(contrast(colours.ring, colours.card) >= 3, `focus ring ${colours.ring} on ${colours.card}`);
  });

  test('a wrong password moves the focus to the error message', async (t) => {
    const provider = await startTestProvider(t);
    const { consumerUrl } = await startVerification(provider);
    const page = await browser.newPage();
    t.after(() => page.close());
    await page.goto(consumerUrl);
    await page.getByLabel('Username').fill('user_good');
    await page.getByLabel('Password').fill('wrong');
    await page.getByLabel('Password').press('Enter');
    await page.getByRole('alert').waitFor();
    await page.waitForFunction(() => document.activeElement?.id === 'form-error', undefined, { timeout: 5000 });
  });

  test('speaks Spanish when the verification asks for es-MX, through a wrong password and the expired page', async (t) => {
    const receiver = await startWebhookReceiver(t);
    const returnURL = await startReturnPage(t);
    const provider = await startTestProvider(t);
    const body = verificationBody({ returnURL, notificationURL: receiver.url });
    (body.transaction as Record<string, string>).language = 'es-MX';
    const { consumerUrl } = await startVerification(provider, body);
    const page = await browser.newPage({ viewport: { width: 375, height: 720 } });
    t.after(() => page.close());
    await page.goto(consumerUrl);
    assert.equal(await page.locator('html').getAttribute('lang'), 'es');
    await page.getByRole('heading', { name: 'Inicia sesión en Sandbox Federal Bank' }).waitFor();
    await page.getByLabel('Usuario').fill('user_good');
    await page.getByLabel('Contraseña').fill('wrong');
    await page.getByRole('button', { name: 'Iniciar sesión' }).click();
    assert.equal((await page.getByRole('alert').textContent())?.trim(), 'Usuario o contraseña incorrectos');
    const buttonHeights = await page
      .locator('button')
      .evaluateAll((buttons) => buttons.map((button) => button.getBoundingClientRect().height));
    assert.ok(
      buttonHeights.every((height) => height < 50),
      `one line per button on a phone: ${buttonHeights.join(', ')}`,
    );
    const rightEdges = await page.evaluate(() =>
      [document.querySelector('.secondary')!, document.querySelector('#password')!].map(
        (el) => el.getBoundingClientRect().right,
      ),
    );
    assert.ok(rightEdges[0]! <= rightEdges[1]! + 0.5, `the buttons stay inside the form: ${rightEdges.join(' vs ')}`);
    await page.screenshot({ path: 'test-results/provider-consumer-page-es-error.png', fullPage: true });
    assert.deepEqual(await axeViolations(page), [], 'the Spanish page with its error passes axe');
    await page.getByRole('button', { name: 'Cancelar' }).click();
    await page.waitForURL(returnURL);
    await page.goto(consumerUrl);
    await page.getByRole('heading', { name: 'Este enlace ha caducado' }).waitFor();
    assert.deepEqual(await axeViolations(page), [], 'the Spanish expired page passes axe');
  });
});
