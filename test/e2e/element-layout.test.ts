// The built element's layout in Chromium, in every state, in English and Spanish, on a phone (320 and
// 375 px) and a desktop (1280 px): buttons on one line, 44 px targets, stacked buttons of one width,
// nothing overflowing, axe (WCAG 2.2 AA) clean; no spinning under reduced motion, no spinner for a blocked pop-up, a spinner still
// an arc in forced colours. Saves test-results/element-<state>-<lang>-<width>.png (1280 and 375 px) for
// people to look at.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import { startElementInChromium, threeAtATime, type ElementInChromium } from '../helpers/element-in-chromium.ts';
import { SCENARIOS, showScenario, type Lang, type Scenario } from '../browser/screenshots.ts';

const SHOT_DIR = 'test-results';
const PICTURE_WIDTHS = new Set([1280, 375]);

/** What the layout looks like, measured in the page: one entry per button or link, plus overflow. */
async function measure(page: Page) {
  return page.locator('obv-link-account').evaluate((host) => {
    const root = host.shadowRoot!;
    const card = root.querySelector<HTMLElement>('[part~="base"]')!;
    const controls = [...root.querySelectorAll<HTMLElement>('button, a')].map((control) => {
      const box = control.getBoundingClientRect();
      const style = getComputedStyle(control);
      // More than one line box means the label wrapped.
      const lines = Math.round(
        (box.height - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom) - 2) /
          parseFloat(style.lineHeight),
      );
      return {
        label: control.textContent!.trim(),
        width: box.width,
        height: box.height,
        top: box.top,
        left: box.left,
        lines,
      };
    });
    return {
      controls,
      overflows:
        card.scrollWidth > card.clientWidth + 1 ||
        host.getBoundingClientRect().right > document.documentElement.clientWidth,
    };
  });
}

describe('the element’s layout in Chromium', { timeout: 600_000 }, () => {
  let harness: ElementInChromium;
  let browser: Browser;
  let bundle: string;

  before(async () => {
    harness = await startElementInChromium(SHOT_DIR);
    ({ browser, bundle } = harness);
  });
  after(() => harness?.close());

  it('holds in every state at 320, 375 and 1280 px in English and Spanish, and saves the pictures', async () => {
    const problems: string[] = [];
    const cases = (['en', 'es'] as Lang[]).flatMap((lang) =>
      [1280, 375, 320].flatMap((width) => SCENARIOS.map((scenario) => ({ lang, width, scenario }))),
    );
    const check = async ({ lang, width, scenario }: (typeof cases)[number]) => {
      const where = `${scenario.name} ${lang} ${width}px`;
      const { context, page } = await showScenario(browser, bundle, scenario, { lang, width });
      try {
        const { controls, overflows } = await measure(page);
        if (overflows) problems.push(`${where}: the card overflows`);
        for (const control of controls) {
          if (control.lines > 1) problems.push(`${where}: “${control.label}” wraps onto ${control.lines} lines`);
          if (control.height < 44 || control.width < 44)
            problems.push(`${where}: “${control.label}” is ${control.width}×${control.height} px, under 44 px`);
        }
        // Stacked (one above the other) buttons share one width.
        const stacked = controls.length > 1 && controls.some((control) => control.top !== controls[0]!.top);
        if (stacked && controls.some((control) => Math.abs(control.width - controls[0]!.width) > 1)) {
          problems.push(
            `${where}: stacked buttons of different widths (${controls.map((c) => Math.round(c.width)).join(', ')})`,
          );
        }
        // axe with the WCAG 2.2 A/AA rules, once per state and language (the phone width: the tightest).
        if (width === 375) {
          for (const violation of await harness.axeViolations(page)) problems.push(`${where}: axe ${violation}`);
        }
        if (PICTURE_WIDTHS.has(width)) {
          await page
            .locator('#frame')
            .screenshot({ path: `${SHOT_DIR}/element-${scenario.name}-${lang}-${width}.png`, animations: 'disabled' });
        }
      } finally {
        await context.close();
      }
    };
    await threeAtATime(cases, check);
    assert.deepEqual(problems.sort(), []);
  });

  const starting = SCENARIOS.find((scenario) => scenario.name === 'starting')!;
  const blocked = SCENARIOS.find((scenario) => scenario.name === 'popup-blocked')!;
  const waiting = SCENARIOS.find((scenario) => scenario.name === 'waiting')!;

  async function inShadow<T>(
    scenario: Scenario,
    options: { reducedMotion?: 'reduce'; forcedColors?: 'active' },
    read: (root: ShadowRoot) => T,
  ): Promise<T> {
    const { context, page } = await showScenario(browser, bundle, scenario, { lang: 'en', width: 375, ...options });
    try {
      return await page.locator('obv-link-account').evaluate((host, source) => {
        const fn = new Function('root', `return (${source})(root)`) as (root: ShadowRoot) => T;
        return fn(host.shadowRoot!);
      }, read.toString());
    } finally {
      await context.close();
    }
  }

  it('spins nothing under prefers-reduced-motion, yet shows that it is busy', async () => {
    for (const scenario of [starting, waiting]) {
      const result = await inShadow(scenario, { reducedMotion: 'reduce' }, (root) => {
        const spinner = root.querySelector('.spinner');
        return { spinner: !!spinner, animations: spinner ? spinner.getAnimations().length : 0 };
      });
      assert.deepEqual(result, { spinner: true, animations: 0 }, scenario.name);
    }
    const moving = await inShadow(starting, {}, (root) => root.querySelector('.spinner')?.getAnimations().length ?? 0);
    assert.equal(moving, 1, 'without the preference the indicator spins');
  });

  it('shows no spinner when the pop-up was blocked (nothing is under way until the shopper opens the link)', async () => {
    const result = await inShadow(blocked, {}, (root) => ({
      spinner: !!root.querySelector('.spinner'),
      icon: !!root.querySelector('[part~="icon"] svg'),
      link: !!root.querySelector('[part~="link"]'),
    }));
    assert.deepEqual(result, { spinner: false, icon: true, link: true });
  });

  it('keeps the busy indicator an arc in forced colours (every side would get one colour: only the top is drawn)', async () => {
    const spinner = (forcedColors: 'active' | 'none') =>
      inShadow(starting, forcedColors === 'active' ? { forcedColors } : {}, (root) => {
        const style = getComputedStyle(root.querySelector('.spinner')!);
        return {
          styles: [style.borderTopStyle, style.borderRightStyle, style.borderBottomStyle, style.borderLeftStyle],
          thick: parseFloat(style.borderTopWidth) >= 2,
          animation: style.animationName,
        };
      });
    assert.deepEqual(await spinner('active'), {
      styles: ['solid', 'none', 'none', 'none'],
      thick: true,
      animation: 'spin',
    });
    // Without forced colours: the whole ring, its top in the accent colour.
    assert.deepEqual((await spinner('none')).styles, ['solid', 'solid', 'solid', 'solid']);
  });
});
