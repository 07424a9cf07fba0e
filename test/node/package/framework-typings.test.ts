// frameworks/attributes.d.ts (the React and Vue typings' attribute list) is written by hand: it must name
// exactly the attributes the element declares, so a renamed or dropped one (like `account-token`) cannot
// linger there. TypeScript does not catch it in JSX: hyphenated attribute names are never type-checked.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

/** The attribute names of the element's `static properties` (Lit: `attribute: '…'`, else the lower-cased name). */
function declaredAttributes(): string[] {
  const source = readFileSync('widget/obv-link-account-element.ts', 'utf8');
  const block = /static override properties = \{\n([\s\S]*?)\n {2}\};/.exec(source)?.[1];
  assert.ok(block, "found the element's static properties");
  return block.split('\n').flatMap((line) => {
    const match = /^\s+(\w+): \{(.*)\},?$/.exec(line);
    if (!match || /attribute: false|state: true/.test(match[2]!)) return [];
    return [/attribute: '([a-z-]+)'/.exec(match[2]!)?.[1] ?? match[1]!.toLowerCase()];
  });
}

test('the React and Vue typings name exactly the attributes the element declares', () => {
  const typings = readFileSync('frameworks/attributes.d.ts', 'utf8');
  // `strings` is a property, not an attribute; a `never` entry is one a template may not set (read-only `state`).
  const typed = [...typings.matchAll(/^\s+'?([a-z-]+)'?\?: (\w+)/gm)]
    .filter((match) => match[1] !== 'strings' && match[2] !== 'never')
    .map((match) => match[1]!);
  const declared = declaredAttributes();
  assert.ok(declared.includes('link-token') && declared.length >= 6, `parsed ${declared.join(', ')}`);
  assert.deepEqual(typed.sort(), declared.sort());
});
