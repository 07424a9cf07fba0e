// The repository explains itself: no comment may send a reader to a document that is not in it (the
// provider's own description or an old design note), every link into docs/UPSTREAM.md,
// docs/ARCHITECTURE.md or docs/CONTRACTS.md must land on a heading that exists, by GitHub's anchor rules,
// and every source path named in docs/, CONTRIBUTING.md and a comment (`proxy/storage/payments.ts`,
// `verifications/bank-step.ts` from inside proxy/) names a file or folder that is there.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import ts from 'typescript';
import { anchorsOf, githubSlug } from '../../helpers/markdown-anchors.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const SOURCE = /\.(ts|tsx|js|mjs|cjs)$/;
const TEXT = /\.(ts|tsx|js|mjs|cjs|md|json|html|css|sh)$/;
const SKIPPED_FOLDERS = new Set(['node_modules', 'dist', 'test-results', '.git', 'coverage']);

/** Tracked files (git), or every file outside build output when this is not a git checkout. */
function repositoryFiles(): string[] {
  try {
    // A tracked file deleted in the work tree (a move not yet committed) has nothing to check.
    return execFileSync('git', ['ls-files'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((path) => path && existsSync(join(ROOT, path)));
  } catch {
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const entry of readdirSync(dir, { withFileTypes: true })) {
        if (entry.isDirectory()) {
          if (!SKIPPED_FOLDERS.has(entry.name)) walk(join(dir, entry.name));
        } else {
          found.push(relative(ROOT, join(dir, entry.name)));
        }
      }
    };
    walk(ROOT);
    return found;
  }
}

/** Every comment of a JavaScript/TypeScript file, with its line, found through the parser (not a regex). */
export function commentsOf(fileName: string, text: string): { line: number; text: string }[] {
  const source = ts.createSourceFile(
    fileName,
    text,
    ts.ScriptTarget.Latest,
    false,
    /\.(js|mjs|cjs)$/.test(fileName) ? ts.ScriptKind.JS : ts.ScriptKind.TS,
  );
  const seen = new Map<number, string>();
  const collect = (ranges: ts.CommentRange[] | undefined) => {
    for (const range of ranges ?? []) seen.set(range.pos, text.slice(range.pos, range.end));
  };
  const visit = (node: ts.Node) => {
    collect(ts.getLeadingCommentRanges(text, node.getFullStart()));
    collect(ts.getTrailingCommentRanges(text, node.getEnd()));
    node.forEachChild(visit);
  };
  collect(ts.getLeadingCommentRanges(text, 0));
  visit(source);
  collect(ts.getLeadingCommentRanges(text, source.endOfFileToken.getFullStart()));
  return [...seen].map(([pos, comment]) => ({
    line: source.getLineAndCharacterOfPosition(pos).line + 1,
    text: comment,
  }));
}

/**
 * Phrases that cite a document outside the repository: the old design note by name, and the provider's
 * description as "the spec" (`spec:`, `spec's`, `(spec`, `spec table`, its section names).
 */
const OUTSIDE_CITATIONS: readonly RegExp[] = [
  /\bDESIGN(\.md)?\b/,
  /(?<![\w./-])spec(?![\w-])/i,
  /shared\/spec/i,
  /Authentication §/,
  /Resources →/,
];

/** The first outside citation in `text`, if any. */
export function outsideCitation(text: string): string | undefined {
  for (const pattern of OUTSIDE_CITATIONS) {
    const match = pattern.exec(text);
    if (match) return match[0];
  }
  return undefined;
}

/** Links into the three documents: `docs/UPSTREAM.md#d3-…`, or `UPSTREAM.md#…` from inside docs/. */
const DOC_LINK = /(?<![\w/.-])(?:docs\/)?(UPSTREAM|ARCHITECTURE|CONTRACTS)\.md#([\p{L}\p{N}_%-]+)/gu;

const files = repositoryFiles();
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const THIS_FILE = relative(ROOT, fileURLToPath(import.meta.url));

describe('the checks themselves', () => {
  test('an outside citation is recognised in a comment, a citation of docs/ is not', () => {
    assert.equal(outsideCitation('// Reads the body (DESIGN.md).'), 'DESIGN.md');
    assert.equal(outsideCitation('/** The token response (spec: Resources → Token response). */'), 'spec');
    assert.equal(outsideCitation("// one RFC 6749 error of the spec's table"), 'spec');
    assert.equal(outsideCitation('// fields (spec table); others pass through'), 'spec');
    assert.equal(outsideCitation('// (docs/UPSTREAM.md#d3-token-errors) and docs/CONTRACTS.md §1'), undefined);
    assert.equal(outsideCitation('// a specific case, the widget.spec.ts file, respect'), undefined);
  });

  test('comments are found by the parser, strings and template text are not comments', () => {
    const found = commentsOf(
      'x.ts',
      [
        '// first',
        'const url = `${a}://host`; /* second */',
        "const s = '// not a comment';",
        '/** third */',
        'export const x = 1;',
        '// last',
      ].join('\n'),
    );
    assert.deepEqual(
      found.map((c) => [c.line, c.text]),
      [
        [1, '// first'],
        [2, '/* second */'],
        [4, '/** third */'],
        [6, '// last'],
      ],
    );
  });

  test('anchors follow GitHub: punctuation dropped, duplicates numbered', () => {
    assert.equal(githubSlug('D12 Notification signature'), 'd12-notification-signature');
    assert.equal(githubSlug('Endpoint 4: interactive transaction'), 'endpoint-4-interactive-transaction');
    assert.equal(
      githubSlug("Decisions where the provider's documentation is silent"),
      'decisions-where-the-providers-documentation-is-silent',
    );
    assert.equal(
      githubSlug('1. Sandbox provider (`sandbox/`) — what the proxy sees'),
      '1-sandbox-provider-sandbox--what-the-proxy-sees',
    );
    assert.deepEqual([...anchorsOf('# A\n## B\n```\n# not a heading\n```\n## B\n')], ['a', 'b', 'b-1']);
  });
});

describe('comments point only inside the repository', () => {
  const sources = files.filter(
    (path) => SOURCE.test(path) && path !== THIS_FILE && !path.startsWith('test/package/fixtures/'),
  );

  test('there are sources to check', () => {
    assert.ok(sources.length > 100, `only ${sources.length} source files found`);
  });

  test('no comment cites the design note or "the spec": they cite docs/UPSTREAM.md or docs/CONTRACTS.md', () => {
    const offenders = sources.flatMap((path) =>
      commentsOf(path, read(path)).flatMap(({ line, text }) => {
        const citation = outsideCitation(text);
        return citation ? [`${path}:${line}: "${citation}" in ${text.split('\n')[0]?.slice(0, 100)}`] : [];
      }),
    );
    assert.deepEqual(offenders, []);
  });

  test('the README, CONTRIBUTING.md and docs/ cite no document outside the repository either', () => {
    const docs = files.filter(
      (path) => path === 'README.md' || path === 'CONTRIBUTING.md' || /^docs\/[^/]+\.md$/.test(path),
    );
    const offenders = docs.flatMap((path) =>
      read(path)
        .split('\n')
        .flatMap((line, index) => {
          const citation = outsideCitation(line);
          return citation ? [`${path}:${index + 1}: "${citation}"`] : [];
        }),
    );
    assert.deepEqual(offenders, []);
  });
});

describe('links into docs/ land on a heading', () => {
  const anchors = new Map(
    ['UPSTREAM', 'ARCHITECTURE', 'CONTRACTS'].map((name) => [name, anchorsOf(read(`docs/${name}.md`))]),
  );

  test('the decisions have numbered, linkable headings', () => {
    const upstream = anchors.get('UPSTREAM') ?? new Set();
    assert.ok([...upstream].filter((anchor) => /^d\d+-/.test(anchor)).length >= 10, [...upstream].join(', '));
  });

  test('every docs/UPSTREAM.md#…, docs/ARCHITECTURE.md#… and docs/CONTRACTS.md#… anchor exists', () => {
    const texts = files.filter((path) => TEXT.test(path) && path !== THIS_FILE && path !== 'package-lock.json');
    let links = 0;
    const broken = texts.flatMap((path) =>
      [...read(path).matchAll(DOC_LINK)].flatMap((match) => {
        links += 1;
        const [, name = '', anchor = ''] = match;
        return anchors.get(name)?.has(decodeURIComponent(anchor).toLowerCase()) ? [] : [`${path}: ${match[0]}`];
      }),
    );
    assert.deepEqual(broken, []);
    assert.ok(links > 20, `only ${links} links found`);
  });

  test('in-page links of the three documents exist', () => {
    const broken = [...anchors].flatMap(([name, own]) =>
      [...read(`docs/${name}.md`).matchAll(/\]\(#([^)\s]+)\)/g)].flatMap((match) =>
        own.has(match[1] ?? '') ? [] : [`docs/${name}.md: #${match[1]}`],
      ),
    );
    assert.deepEqual(broken, []);
  });
});

/**
 * A path named in prose: a file with a source or document extension under at least one folder (`a/b.ts`,
 * `docs/X.md`), or a folder under one of the repository's own (`proxy/storage/`); a `{a,b}` list allowed.
 * A bare `x.ts` or `memory/` is read in the context of its sentence, and a URL's path (after `:`) is no file.
 */
const NAMED_PATH =
  /(?<![\w@/.$:-])((?:[\w.{},-]+\/)+(?:[\w.{},-]*[\w}-]\.(?:ts|tsx|js|mjs|cjs|md|json|sh|py|css|html))?)(?![\w/*])/g;
const TOP_FOLDERS = /^(proxy|widget|sandbox|demo|test|bench|scripts|docs|contracts|examples|frameworks|bin)\//;

/** Not source paths: build output and what a run makes, the package's own subpaths, relative examples, `{placeholders}`. */
function notASourcePath(path: string): boolean {
  return (
    /^(dist|node_modules|test-results|coverage|\.runtime|obv-link|obv-link-data|\.\.?)\//.test(path) ||
    path.includes('*') ||
    /\{[^},]*\}/.test(path)
  );
}

/** `a/{b,c}.ts` → `a/b.ts`, `a/c.ts`. */
export function expandPath(path: string): string[] {
  const list = /\{([^}]*)\}/.exec(path);
  return list ? list[1]!.split(',').flatMap((choice) => expandPath(path.replace(list[0], choice))) : [path];
}

/** Where a path named in `file` may be read from: the file's folder and each above it, and the proxy's root (tests name its files so). */
function bases(file: string): string[] {
  const found: string[] = [];
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    found.push(dir);
    if (dir === '.') break;
  }
  return [...found, 'proxy'];
}

/** The paths `text` names that none of `file`'s bases holds. */
export function missingPaths(
  file: string,
  text: string,
  exists: (path: string) => boolean = (path) => existsSync(join(ROOT, path)),
): string[] {
  return [...text.matchAll(NAMED_PATH)]
    .map((match) => match[1]!)
    .filter((path) => !notASourcePath(path) && (!path.endsWith('/') || TOP_FOLDERS.test(path)))
    .filter(
      (path) =>
        !expandPath(path).every((each) => bases(file).some((base) => exists(join(base, each).replace(/\/$/, '')))),
    );
}

describe('source paths named in docs/ and in comments exist', () => {
  test("the check reads paths as a newcomer would: from the repository, from the file's own folder and those above it", () => {
    const tree = new Set([
      'proxy/storage/payments.ts',
      'proxy/storage/sessions.ts',
      'proxy/storage',
      'proxy',
      'docs/X.md',
      'docs',
    ]);
    const exists = (path: string) => tree.has(path);
    assert.deepEqual(missingPaths('docs/X.md', 'see `proxy/storage/payments.ts` and proxy/storage/', exists), []);
    assert.deepEqual(
      missingPaths('proxy/routes/a.ts', '// storage/payments.ts, storage/{payments,sessions}.ts', exists),
      [],
    );
    assert.deepEqual(missingPaths('test/node/a.test.ts', '// storage/payments.ts', exists), []);
    assert.deepEqual(missingPaths('docs/X.md', 'proxy/sessions/types.ts, storage/{payments,removals}.ts', exists), [
      'proxy/sessions/types.ts',
      'storage/{payments,removals}.ts',
    ]);
    assert.deepEqual(
      missingPaths(
        'docs/X.md',
        'dist/obv-link-account.js, obv-link/openapi.json, {mount}/ws, ./db.js, a.ts, test/*.test.ts',
        exists,
      ),
      [],
    );
    assert.deepEqual(missingPaths('docs/X.md', 'in memory/ or sqlite/, at http://127.0.0.1:3000/orders/', exists), []);
  });

  test("every path named in docs/*.md, CONTRIBUTING.md and a source file's comments is there", () => {
    const documents = files.filter((path) => /^docs\/[^/]+\.md$/.test(path) || path === 'CONTRIBUTING.md');
    const sources = files.filter(
      (path) => SOURCE.test(path) && path !== THIS_FILE && !path.startsWith('test/package/fixtures/'),
    );
    const stale = [
      ...documents.flatMap((path) => missingPaths(path, read(path)).map((missing) => `${path}: ${missing}`)),
      ...sources.flatMap((path) =>
        commentsOf(path, read(path)).flatMap(({ line, text }) =>
          missingPaths(path, text).map((missing) => `${path}:${line}: ${missing}`),
        ),
      ),
    ];
    assert.deepEqual(stale, []);
    assert.ok(documents.length > 10 && sources.length > 100);
  });
});

/** The journeys of docs/ARCHITECTURE.md ("### " headings under "## Journeys"), each with the files it names. */
export function journeys(architecture: string): { title: string; files: string[] }[] {
  const start = architecture.indexOf('\n## Journeys');
  const end = architecture.indexOf('\n## ', start + 1);
  const section = architecture.slice(start, end === -1 ? undefined : end);
  return section
    .split(/\n### /)
    .slice(1)
    .map((part) => ({
      title: part.slice(0, part.indexOf('\n')),
      files: [
        ...new Set(
          [...part.matchAll(NAMED_PATH)]
            .map((match) => match[1]!)
            .filter((path) => !path.endsWith('/') && !notASourcePath(path)),
        ),
      ],
    }));
}

describe("docs/ARCHITECTURE.md's journeys stay short", () => {
  test('files are counted once each, folders and URLs not at all', () => {
    const text =
      '# Doc\n\n## Journeys\n\n### One\n\n1. `a/b.ts` then a/b.ts, `c/d.ts`, the `proxy/storage/` folder, {mount}/ws\n\n### Two\n\nx/y.md\n\n## After\n\nz/w.ts\n';
    assert.deepEqual(journeys(text), [
      { title: 'One', files: ['a/b.ts', 'c/d.ts'] },
      { title: 'Two', files: ['x/y.md'] },
    ]);
  });

  test('one journey per step of a purchase and each names at most five files', () => {
    const found = journeys(read('docs/ARCHITECTURE.md'));
    for (const step of [
      'A link session',
      'A start',
      'The bank step',
      'A notification',
      'The relay',
      'A payment',
      'A merchant event',
    ]) {
      assert.ok(
        found.some((journey) => journey.title === step),
        `no journey "${step}"`,
      );
    }
    const long = found
      .filter((journey) => journey.files.length > 5)
      .map((journey) => `${journey.title}: ${journey.files.join(', ')}`);
    assert.deepEqual(long, []);
  });
});
