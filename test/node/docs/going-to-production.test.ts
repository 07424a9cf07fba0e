// docs/GOING-TO-PRODUCTION.md's checklist stays true to the proxy: every OBV_* variable it names is one
// the proxy reads, and every variable a production boot requires is in its "Required" table.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { ConfigError, ENV_VARIABLES, configFromEnv } from '../../../proxy/index.ts';

const page = readFileSync(new URL('../../../docs/GOING-TO-PRODUCTION.md', import.meta.url), 'utf8');

/** Variables a boot outside sandbox mode reports as missing (with the API key set, which needs more). */
function requiredInProduction(): string[] {
  try {
    configFromEnv({ OBV_MERCHANT_API_KEY: 'k7Hq2Zp9Lw4Xc1Vb8Nm3Rt6Yu0Io5PaSd' });
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.issues.filter((issue) => issue.message.startsWith('is required')).map((issue) => issue.setting);
  }
  assert.fail('an empty environment must not boot');
}

/** The variables in the first cell of each row of the table under `heading`. */
function tableVariables(heading: string): string[] {
  const start = page.indexOf(heading);
  assert.ok(start >= 0, `the page has "${heading}"`);
  const table = /\n(\|[\s\S]*?)\n\n/.exec(page.slice(start))?.[1] ?? '';
  return table
    .split('\n')
    .flatMap((row) => [...(row.split('|')[1] ?? '').matchAll(/`([A-Z_]+)`/g)].map((match) => match[1] as string));
}

describe('docs/GOING-TO-PRODUCTION.md', () => {
  test('names only OBV_* variables the proxy reads', () => {
    const named = new Set([...page.matchAll(/\bOBV_[A-Z_]+/g)].map((match) => match[0]));
    assert.ok(named.size > 10, `only ${named.size} variables named`);
    const unknown = [...named].filter((name) => !(name in ENV_VARIABLES));
    assert.deepEqual(unknown, []);
  });

  test('lists in its "Required" table every variable a production boot requires', () => {
    const required = requiredInProduction();
    assert.ok(required.includes('OBV_CLIENT_SECRET'), required.join(', '));
    const listed = tableVariables('Required outside sandbox mode');
    assert.deepEqual(
      required.filter((name) => !listed.includes(name)),
      [],
    );
  });
});
