// The element's returning-shopper states in Chromium, in English and Spanish, at 320, 375 and 1280 px:
// the saved-account list, Remove's question in the element and the list after a removal, "Use another
// account" (the consent box beside the bank button, the list one step back), the consent box of a first
// purchase (its details folded), and Reconnect (alone, and with other saved accounts). Nothing overflows,
// every button is at least 44 px and on one line, Remove sits on its account's line, axe (WCAG 2.2 AA)
// finds nothing, and the radios behave as a radio group with spoken names.
// The proxy is mocked with Playwright routes, with the proxy's own words (proxy/accounts/).
// Saves test-results/saved-<state>-<lang>-<width>.png for people to look at.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startElementInChromium, threeAtATime, type ElementInChromium } from '../helpers/element-in-chromium.ts';
import { consentWords } from '../../proxy/words/consent.ts';
import { offerWords } from '../../proxy/words/offer.ts';
import { accountWords } from '../../proxy/words/outcomes.ts';

const SHOT_DIR = 'test-results';
const ORIGIN = 'http://merchant.test';
const LINK_TOKEN = `lt_${'a'.repeat(32)}`;
type Lang = 'en' | 'es';

const account = (id: string, accountLabel: string, fiAccountType: string, lang: Lang) => ({
  id: `${id}${'0'.repeat(22 - id.length)}`,
  fiName: 'Sandbox Federal Bank',
  accountLabel,
  fiAccountType,
  ...accountWords(accountLabel, fiAccountType, lang),
});

interface Scenario {
  name: string;
  state: 'saved' | 'idle';
  offer: (lang: Lang) => Record<string, unknown>;
  /** What the shopper does first: the name of the button pressed ("Use another account", Remove…). */
  act?: (lang: Lang) => { press: string | RegExp; then?: string | RegExp }[];
}

const accounts = (lang: Lang) => [
  account('acc1', 'Checking ••••4321', 'CHECKING', lang),
  account('acc2', 'Savings ••••9876', 'SAVINGS', lang),
];
const reconnect = (lang: Lang) => {
  const [first] = accounts(lang);
  const verb = offerWords(lang).reconnect;
  return {
    ...first,
    displayLabel: `${verb} Sandbox Federal Bank ••••4321`,
    spokenLabel: `${verb} Sandbox Federal Bank, ${first!.spokenLabel}`,
  };
};

const SCENARIOS: Scenario[] = [
  {
    name: 'list',
    state: 'saved',
    offer: (lang) => ({ accounts: accounts(lang), words: offerWords(lang), saving: consentWords(lang) }),
  },
  {
    name: 'another',
    state: 'idle',
    act: (lang) => [{ press: offerWords(lang).useAnother }],
    offer: (lang) => ({ accounts: accounts(lang), words: offerWords(lang), saving: consentWords(lang) }),
  },
  {
    name: 'confirm',
    state: 'saved',
    act: (lang) => [{ press: new RegExp(`^${offerWords(lang).remove} .*9876`) }],
    offer: (lang) => ({ accounts: accounts(lang), words: offerWords(lang), saving: consentWords(lang) }),
  },
  {
    name: 'removed',
    state: 'saved',
    act: (lang) => [
      { press: new RegExp(`^${offerWords(lang).remove} .*9876`) },
      { press: new RegExp(`^${offerWords(lang).remove}$`) },
    ],
    offer: (lang) => ({
      accounts: [...accounts(lang), account('acc3', 'Savings ••••5555', 'SAVINGS', lang)],
      words: offerWords(lang),
      saving: consentWords(lang),
    }),
  },
  {
    name: 'consent',
    state: 'idle',
    offer: (lang) => ({
      accounts: [],
      words: offerWords(lang),
      saving: consentWords(lang, 'Harbor & Pine Outfitters'),
    }),
  },
  {
    name: 'reconnect',
    state: 'idle',
    offer: (lang) => ({ accounts: [], words: offerWords(lang), reconnect: reconnect(lang) }),
  },
  {
    name: 'reconnect-others',
    state: 'idle',
    offer: (lang) => ({
      accounts: accounts(lang).slice(1),
      words: offerWords(lang),
      saving: consentWords(lang),
      reconnect: reconnect(lang),
    }),
  },
];

async function showScenario(
  browser: Browser,
  bundle: string,
  scenario: Scenario,
  lang: Lang,
  width: number,
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await browser.newContext({
    viewport: { width, height: 720 },
    deviceScaleFactor: width < 600 ? 2 : 1,
  });
  const page = await context.newPage();
  const frame = width < 600 ? '#frame{padding:16px}' : '#frame{width:34rem;margin:0 auto;padding:32px}';
  await page.route(`${ORIGIN}/**`, async (request) => {
    const url = new URL(request.request().url());
    if (url.pathname === '/') {
      return request.fulfill({
        contentType: 'text/html',
        body: `<!doctype html><html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Checkout</title><style>body{margin:0;background:#f4f6f9;font-family:system-ui}${frame}</style><script type="module" src="/obv-link-account.js"></script></head>
<body><div id="frame"><obv-link-account proxy-url="/obv" link-token="${LINK_TOKEN}"></obv-link-account></div></body></html>`,
      });
    }
    if (url.pathname === '/obv-link-account.js')
      return request.fulfill({ contentType: 'text/javascript', body: bundle });
    if (url.pathname === '/obv/saved-accounts/offer')
      return request.fulfill({ contentType: 'application/json', body: JSON.stringify(scenario.offer(lang)) });
    if (url.pathname === '/obv/saved-accounts/use') {
      const { savedAccountId } = request.request().postDataJSON() as { savedAccountId: string };
      const chosen = accounts(lang).find((a) => a.id === savedAccountId)!;
      const { id: _id, ...display } = chosen;
      return request.fulfill({
        status: 201,
        contentType: 'application/json',
        body: JSON.stringify({ status: 'success', linkRef: `ref_${savedAccountId}`, ...display }),
      });
    }
    if (url.pathname === '/obv/saved-accounts/remove') return request.fulfill({ status: 204, body: '' });
    return request.fulfill({ status: 404, body: '' });
  });
  await page.goto(`${ORIGIN}/`);
  if (scenario.act)
    await page.waitForFunction(
      () => (document.querySelector('obv-link-account') as HTMLElement & { account?: object }).account !== undefined,
    );
  for (const { press } of scenario.act?.(lang) ?? [])
    await page.locator('obv-link-account').getByRole('button', { name: press }).click();
  await page.waitForFunction(
    (state) => document.querySelector('obv-link-account')?.getAttribute('state') === state,
    scenario.state,
  );
  if (scenario.state === 'saved')
    await page.waitForFunction(
      () => (document.querySelector('obv-link-account') as HTMLElement & { account?: object }).account !== undefined,
    );
  else await page.locator('obv-link-account').locator('.consent, .title span').first().waitFor();
  if (scenario.name === 'removed') await page.locator('obv-link-account').locator('#s p:not(.title)').waitFor();
  await page.mouse.move(0, 0);
  return { context, page };
}

async function measure(page: Page) {
  return page.locator('obv-link-account').evaluate((host) => {
    const root = host.shadowRoot!;
    const card = root.querySelector<HTMLElement>('[part~="base"]')!;
    const controls = [...root.querySelectorAll<HTMLElement>('button, a, label')].map((control) => {
      const box = control.getBoundingClientRect();
      const style = getComputedStyle(control);
      const lines =
        control.localName === 'label'
          ? 1
          : Math.round(
              (box.height - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom) - 2) /
                parseFloat(style.lineHeight),
            );
      return { label: control.textContent!.trim().slice(0, 40), width: box.width, height: box.height, lines };
    });
    // Remove beside its account: vertically within the account's label, never on a line of its own.
    const apart = [...root.querySelectorAll<HTMLElement>('.row')].filter((row) => {
      const label = row.querySelector('label')!.getBoundingClientRect();
      const remove = row.querySelector(':scope > button')?.getBoundingClientRect();
      return remove && (remove.top >= label.bottom || remove.bottom <= label.top);
    }).length;
    return {
      controls,
      apart,
      overflows:
        card.scrollWidth > card.clientWidth + 1 ||
        host.getBoundingClientRect().right > document.documentElement.clientWidth,
    };
  });
}

describe('the element’s saved-account states in Chromium', { timeout: 600_000 }, () => {
  let harness: ElementInChromium;
  let browser: Browser;
  let bundle: string;

  before(async () => {
    harness = await startElementInChromium(SHOT_DIR);
    ({ browser, bundle } = harness);
  });
  after(() => harness?.close());

  it('holds at 320, 375 and 1280 px in English and Spanish, axe-clean, and saves the pictures', async () => {
    const problems: string[] = [];
    const cases = (['en', 'es'] as Lang[]).flatMap((lang) =>
      [1280, 375, 320].flatMap((width) => SCENARIOS.map((scenario) => ({ lang, width, scenario }))),
    );
    const check = async ({ lang, width, scenario }: (typeof cases)[number]) => {
      const where = `${scenario.name} ${lang} ${width}px`;
      const { context, page } = await showScenario(browser, bundle, scenario, lang, width);
      try {
        const { controls, overflows, apart } = await measure(page);
        if (overflows) problems.push(`${where}: the card overflows`);
        if (apart) problems.push(`${where}: ${apart} Remove button(s) on a line apart from their account`);
        for (const control of controls) {
          if (control.lines > 1) problems.push(`${where}: “${control.label}” wraps onto ${control.lines} lines`);
          if (control.height < 44 || control.width < 44)
            problems.push(`${where}: “${control.label}” is ${control.width}×${control.height} px, under 44 px`);
        }
        for (const violation of await harness.axeViolations(page)) problems.push(`${where}: axe ${violation}`);
        await page
          .locator('#frame')
          .screenshot({ path: `${SHOT_DIR}/saved-${scenario.name}-${lang}-${width}.png`, animations: 'disabled' });
      } finally {
        await context.close();
      }
    };
    await threeAtATime(cases, check);
    assert.deepEqual(problems.sort(), []);
  });

  it('is a radio group: spoken names, one preselected, arrows choose the next account and the form value follows; the consent box comes with "Use another account"', async () => {
    const { context, page } = await showScenario(browser, bundle, SCENARIOS[0]!, 'en', 375);
    try {
      const host = page.locator('obv-link-account');
      const group = host.getByRole('radiogroup', { name: 'Pay with a saved account' });
      const radios = group.getByRole('radio');
      assert.equal(await radios.count(), 2);
      const first = group.getByRole('radio', { name: 'Sandbox Federal Bank Checking ending in 4321' });
      assert.equal(await first.isChecked(), true);
      // The chosen account once ready (its reference comes with the confirmation at the form's submit).
      const value = () =>
        page.evaluate(
          () =>
            (document.querySelector('obv-link-account') as HTMLElement & { account?: { accountLabel: string } }).account
              ?.accountLabel ?? '',
        );
      assert.equal(await value(), 'Checking ••••4321');
      await first.focus();
      await page.keyboard.press('ArrowDown');
      await page.waitForFunction(
        (label) =>
          (document.querySelector('obv-link-account') as HTMLElement & { account?: { accountLabel: string } }).account
            ?.accountLabel === label,
        'Savings ••••9876',
      );
      assert.equal(await group.getByRole('radio', { name: /Savings ending in 9876/ }).isChecked(), true);
      assert.equal(
        await host.getByRole('button', { name: 'Remove Sandbox Federal Bank Checking ending in 4321' }).count(),
        1,
      );
      // Beside the list a consent box would read as the chosen account's: it comes with "Use another account".
      assert.equal(await host.getByRole('checkbox').count(), 0, 'no consent box beside the list');
      await host.getByRole('button', { name: 'Use another account' }).click();
      const consent = host.getByRole('checkbox', { name: 'Save this account for my next purchases' });
      assert.equal(await consent.isChecked(), false, 'the consent box starts unchecked');
      assert.match(await host.locator('#ct').innerText(), /debit this bank account/);
      assert.equal(await value(), '', 'no saved account is chosen while another is about to be linked');
      await host.getByRole('button', { name: 'Use a saved account' }).click();
      await page.waitForFunction(
        (label) =>
          (document.querySelector('obv-link-account') as HTMLElement & { account?: { accountLabel: string } }).account
            ?.accountLabel === label,
        'Savings ••••9876',
      );
      assert.equal(
        await group.getByRole('radio', { name: /Savings ending in 9876/ }).isChecked(),
        true,
        'back on the list, the choice is kept',
      );
    } finally {
      await context.close();
    }
  });
});
