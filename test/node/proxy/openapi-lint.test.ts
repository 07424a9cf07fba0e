// The OpenAPI document (dist/openapi.json, {mount}/openapi.json) against a standard linter's recommended
// rules: Redocly CLI's `recommended` ruleset, as CI and a merchant's API tooling would run it. Every
// operation says who may call it (`security`, `[]` for the browser's, the provider's and the operations
// routes), and every one has a 4XX answer.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { proxyOpenApiDocument } from '../../../proxy/routes/operations.ts';

interface LintProblem {
  ruleId: string;
  severity: 'error' | 'warn';
  message: string;
  location: { pointer?: string }[];
}

const dir = mkdtempSync(path.join(tmpdir(), 'obv-openapi-lint-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** `redocly lint --format=json --extends=recommended` of `document`, run in an empty folder (no config file applies). */
function lint(document: object): Promise<{ problems: LintProblem[]; output: string }> {
  const file = path.join(dir, 'openapi.json');
  writeFileSync(file, JSON.stringify(document, null, 2));
  const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
  // No telemetry, no update notice: the test makes no network request.
  const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', NO_COLOR: '1' };
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cli, 'lint', '--format=json', '--extends=recommended', file],
      { cwd: dir, env, timeout: 60_000 },
      (error, stdout, stderr) => {
        try {
          const { problems } = JSON.parse(stdout) as { problems: LintProblem[] };
          resolve({ problems, output: stderr });
        } catch {
          reject(new Error(`redocly lint gave no JSON report: ${String(error)}\n${stdout}\n${stderr}`));
        }
      },
    );
  });
}

test("the OpenAPI document passes Redocly's recommended rules with no error and no warning", async () => {
  const { problems, output } = await lint(proxyOpenApiDocument('/obv'));
  const listed = problems.map(
    (problem) => `${problem.severity} ${problem.ruleId} ${problem.location[0]?.pointer ?? ''}: ${problem.message}`,
  );
  assert.deepEqual(listed, [], output);
});

test('the linter run is real: a document with an operation without security or a 4XX answer is reported', async () => {
  const document = proxyOpenApiDocument('/obv') as {
    paths: Record<string, Record<string, { security?: unknown; responses: Record<string, unknown> }>>;
  };
  const healthz = document.paths['/healthz']!.get!;
  delete healthz.security;
  healthz.responses = { 200: healthz.responses['200'] };
  const rules = (await lint(document)).problems
    .filter((problem) => problem.location[0]?.pointer?.startsWith('#/paths/~1healthz/get'))
    .map((problem) => problem.ruleId)
    .sort();
  assert.deepEqual(rules, ['operation-4xx-response', 'security-defined']);
});
