// The proxy's folder layers (.dependency-cruiser.mjs, drawn in docs/ARCHITECTURE.md "The layers"): no file
// imports a folder above its own or the root, no files import each other in a loop (type-only imports
// included), the relay reaches only storage, the pages only the words, the words nothing. Run with
// dependency-cruiser, over the real tree, and over a small tree that breaks each rule once, so the check is
// shown to catch what it forbids. The picture in docs/ARCHITECTURE.md lists the same folders in the same order.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import { cruise, type ICruiseOptions, type ICruiseResult, type IFlattenedRuleSet } from 'dependency-cruiser';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
/** The rules, as `npx depcruise proxy` reads them (a .mjs beside package.json: a path, so TypeScript leaves it untyped). */
const RULES_FILE = new URL('../../../.dependency-cruiser.mjs', import.meta.url).href;
const { default: layers, LAYERS } = (await import(RULES_FILE)) as {
  default: { forbidden: unknown[]; options: ICruiseOptions };
  LAYERS: string[];
};

/** The violations of the layer rules in `dir` (the repository, or a test tree), as `rule: from → to`. */
async function violations(dir: string): Promise<string[]> {
  const options: ICruiseOptions = {
    ...layers.options,
    baseDir: dir,
    validate: true,
    ruleSet: { forbidden: layers.forbidden } as IFlattenedRuleSet,
  };
  const { output } = await cruise(['proxy'], options);
  const result = output as ICruiseResult;
  return result.summary.violations
    .map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`)
    .sort();
}

/** The folders the picture under "## The layers" draws, top to bottom: each line of its first code block that starts with ` name/`. */
function drawnLayers(architecture: string): string[] {
  const section = architecture.slice(architecture.indexOf('\n## The layers'));
  const picture = /```\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  return [...picture.matchAll(/^ ([a-z-]+)\/ /gm)].map((match) => match[1]!);
}

describe("the proxy's folder layers", () => {
  test('every folder of proxy/ has its place in the list', () => {
    const folders = readdirSync(join(ROOT, 'proxy'), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
    const unlisted = folders.filter((name) => !LAYERS.includes(name));
    assert.deepEqual(
      unlisted,
      [],
      `add each folder to LAYERS in .dependency-cruiser.mjs, in its place: ${unlisted.join(', ')}`,
    );
    const gone = LAYERS.filter((name) => !folders.includes(name));
    assert.deepEqual(gone, [], `LAYERS names folders proxy/ no longer has: ${gone.join(', ')}`);
  });

  test('docs/ARCHITECTURE.md draws the same layers, in the same order', () => {
    assert.deepEqual(drawnLayers(readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8')), LAYERS);
  });

  test('no import climbs a layer, and no files import each other in a loop', async () => {
    assert.deepEqual(await violations(ROOT), []);
  });

  test('the rules catch an import up, a loop, the relay past storage, a page past the words, the words importing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'obv-layers-'));
    try {
      const files: Record<string, string> = {
        'proxy/index.ts': "export { low } from './storage/low.ts';\n",
        // storage imports routes: upward.
        'proxy/storage/low.ts': "import { high } from '../routes/high.ts';\nexport const low = high;\n",
        'proxy/routes/high.ts': 'export const high = 1;\n',
        // A loop of two files in one folder, one side type-only.
        'proxy/common/a.ts': "import type { B } from './b.ts';\nexport type A = B | 1;\n",
        'proxy/common/b.ts': "import type { A } from './a.ts';\nexport type B = A | 2;\n",
        // Allowed by the order, refused by the narrower rules.
        'proxy/relay/relay.ts': "import { seal } from '../sealing/seal.ts';\nexport const relay = seal;\n",
        'proxy/sealing/seal.ts': 'export const seal = 1;\n',
        'proxy/pages/page.ts': "import { store } from '../storage/store.ts';\nexport const page = store;\n",
        'proxy/storage/store.ts': 'export const store = 1;\n',
        'proxy/words/words.ts': "import { floor } from '../common/floor.ts';\nexport const words = floor;\n",
        'proxy/common/floor.ts': 'export const floor = 1;\n',
        // A folder imports the root.
        'proxy/events/events.ts': "import { low } from '../index.ts';\nexport const events = low;\n",
      };
      for (const [path, text] of Object.entries(files)) {
        mkdirSync(dirname(join(dir, path)), { recursive: true });
        writeFileSync(join(dir, path), text);
      }
      writeFileSync(
        join(dir, 'tsconfig.json'),
        JSON.stringify({ compilerOptions: { allowImportingTsExtensions: true, noEmit: true } }),
      );
      const found = await violations(dir);
      for (const expected of [
        'layer-storage: proxy/storage/low.ts → proxy/routes/high.ts',
        'layer-events: proxy/events/events.ts → proxy/index.ts',
        'only-relay: proxy/relay/relay.ts → proxy/sealing/seal.ts',
        'only-pages: proxy/pages/page.ts → proxy/storage/store.ts',
        'only-words: proxy/words/words.ts → proxy/common/floor.ts',
      ])
        assert.ok(found.includes(expected), `${expected} not found in:\n${found.join('\n')}`);
      assert.ok(
        found.some((line) => /^no-circular: proxy\/common\/(a|b)\.ts/.test(line)),
        `the loop not found in:\n${found.join('\n')}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
