// Steps shared by the returning-shopper end-to-end test: the harness's, plus the check that nothing the
// browser saw (responses, frames, events, the DOM with its shadow roots, storage, the form value) holds
// a secret.
import assert from 'node:assert/strict';
import type { Locator, Page } from 'playwright-core';

import { clickThatMayClose } from './harness.ts';

export * from './harness.ts';

export async function expectNoLeak(page: Page, seen: string[], secrets: string[]): Promise<void> {
  const inPage = await page.evaluate(() => {
    const shadows = [...document.querySelectorAll('*')].map((node) => node.shadowRoot?.innerHTML ?? '').join('\n');
    const host = document.querySelector('obv-link-account') as (HTMLElement & { value: string }) | null;
    const storage = JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage });
    return [document.documentElement.outerHTML, shadows, storage, host?.value ?? '', document.cookie].join('\n');
  });
  assert.ok(seen.length > 20, `recorded ${seen.length} responses, frames and events`);
  for (const secret of secrets) {
    assert.ok(secret.length > 10);
    assert.ok(!inPage.includes(secret), 'the page (DOM, shadow roots, storage, form value) holds no secret');
    assert.ok(!seen.some((text) => text.includes(secret)), 'no response, frame or event carried a secret');
  }
}

/** The sandbox bank's sign-in words in the checkout's language (sandbox/consumer-text.ts). */
const BANK_WORDS = {
  en: { username: 'Username', password: 'Password', signIn: 'Sign in' },
  es: { username: 'Usuario', password: 'Contraseña', signIn: 'Iniciar sesión' },
};

/** Clicks `trigger`, signs in as `username` (user_good: a checking account) at the bank tab it opens (in `lang`); the tab closes itself after. */
export async function linkAtBank(
  page: Page,
  trigger: Locator,
  lang: 'en' | 'es',
  username = 'user_good',
): Promise<void> {
  const words = BANK_WORDS[lang];
  const [bank] = await Promise.all([page.context().waitForEvent('page'), trigger.click()]);
  await bank.getByLabel(words.username).fill(username);
  await bank.getByLabel(words.password).fill('pass_good');
  await clickThatMayClose(bank, bank.getByRole('button', { name: words.signIn, exact: true }));
}
