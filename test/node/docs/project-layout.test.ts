// CONTRIBUTING.md's "Project layout" table names every source folder a newcomer meets (each top-level folder,
// each folder of the proxy and each storage backend), and only folders that exist.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

const root = new URL('../../../', import.meta.url);

/** Folders that hold tracked files, as `a/`, `a/b/`, … */
function trackedFolders(): Set<string> {
  const files = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' }).split('\n').filter(Boolean);
  const folders = new Set<string>();
  for (const file of files) {
    const parts = file.split('/').slice(0, -1);
    for (let depth = 1; depth <= parts.length; depth++) folders.add(`${parts.slice(0, depth).join('/')}/`);
  }
  return folders;
}

/** The first cell of each row of CONTRIBUTING.md's Project layout table. */
function layoutRows(): string[] {
  const guide = readFileSync(new URL('CONTRIBUTING.md', root), 'utf8');
  const section = guide.slice(
    guide.indexOf('## Project layout'),
    guide.indexOf('\n## ', guide.indexOf('## Project layout') + 1),
  );
  return [...section.matchAll(/^\| `([^`]+)` \|/gm)].map((match) => match[1] as string);
}

/** What the table must cover: top-level folders (not dot-folders), the proxy's folders, its storage backends. */
function expectedFolders(folders: Set<string>): string[] {
  return [...folders]
    .filter((folder) => {
      const depth = folder.split('/').length - 1;
      if (folder.startsWith('.')) return false;
      return (
        depth === 1 ||
        (folder.startsWith('proxy/') && depth === 2) ||
        (folder.startsWith('proxy/storage/') && depth === 3)
      );
    })
    .sort();
}

describe('CONTRIBUTING.md project layout', () => {
  const folders = trackedFolders();
  const rows = layoutRows();

  test('names every top-level folder, every proxy folder and each storage backend', () => {
    const missing = expectedFolders(folders).filter((folder) => !rows.includes(folder));
    assert.deepEqual(missing, [], `add a row to CONTRIBUTING.md "Project layout" for: ${missing.join(', ')}`);
  });

  test('names only folders that exist', () => {
    assert.ok(rows.length > 0, 'the Project layout table was not found');
    const stale = rows.filter((row) => !folders.has(row));
    assert.deepEqual(
      stale,
      [],
      `CONTRIBUTING.md "Project layout" names folders that do not exist: ${stale.join(', ')}`,
    );
  });
});
