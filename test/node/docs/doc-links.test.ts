// Every relative link of the README, the guides in docs/ and the other documents lands somewhere: the file
// exists in the repository and, when the link names a heading (`#…`), that heading exists in it (GitHub's
// anchor rules). The guides moved out of the README into docs/; a link left pointing at the old place fails here.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import { anchorsOf } from '../../helpers/markdown-anchors.ts';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const tracked = execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
  .split('\n')
  .filter((file) => file && existsSync(path.join(ROOT, file)));
const DOCUMENTS = tracked.filter((file) => file.endsWith('.md') && !file.startsWith('test/'));

/** `[text](target)` links and images outside code blocks and code spans, with their line. */
function links(markdown: string): { target: string; line: number }[] {
  const found: { target: string; line: number }[] = [];
  let fenced = false;
  markdown.split('\n').forEach((text, index) => {
    if (/^\s*(```|~~~)/.test(text)) fenced = !fenced;
    if (fenced) return;
    for (const match of text.replace(/`[^`]*`/g, '').matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g))
      found.push({ target: match[1] as string, line: index + 1 });
  });
  return found;
}

describe('relative links in the documents', () => {
  test('there are documents and links to check, the guides among them', () => {
    for (const guide of [
      'README.md',
      'docs/ELEMENT.md',
      'docs/PROXY.md',
      'docs/RETURNING-SHOPPERS.md',
      'docs/EVENTS.md',
      'docs/SEVERAL-INSTANCES.md',
      'docs/SANDBOX.md',
      'docs/GOING-TO-PRODUCTION.md',
    ]) {
      assert.ok(DOCUMENTS.includes(guide), `${guide} is a tracked document`);
    }
    assert.ok(DOCUMENTS.flatMap((file) => links(readFileSync(path.join(ROOT, file), 'utf8'))).length > 50);
  });

  test('land on a file that exists and, with #anchor, on a heading of it', () => {
    const anchors = new Map<string, Set<string>>();
    const anchorsIn = (file: string) => {
      if (!anchors.has(file)) anchors.set(file, anchorsOf(readFileSync(path.join(ROOT, file), 'utf8')));
      return anchors.get(file)!;
    };
    const broken: string[] = [];
    for (const document of DOCUMENTS) {
      for (const { target, line } of links(readFileSync(path.join(ROOT, document), 'utf8'))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
        const [file = '', anchor] = target.split('#');
        const resolved =
          file === ''
            ? document
            : path.posix.normalize(path.posix.join(path.posix.dirname(document), file)).replace(/\/$/, '');
        const exists = tracked.includes(resolved) || tracked.some((candidate) => candidate.startsWith(`${resolved}/`));
        if (!exists) broken.push(`${document}:${line}: ${target} (no ${resolved})`);
        else if (
          anchor !== undefined &&
          resolved.endsWith('.md') &&
          !anchorsIn(resolved).has(decodeURIComponent(anchor).toLowerCase())
        ) {
          broken.push(`${document}:${line}: ${target} (no heading #${anchor} in ${resolved})`);
        }
      }
    }
    assert.deepEqual(broken, []);
  });
});
