// What the README and docs/ show a merchant in code: the import specifiers of their code blocks (with the
// names each imports) and their relative links, so the package tests can check both against the tarball;
// and what of a clone they mention, which the package's README must not.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/** Languages whose blocks are JavaScript modules (or hold one, as a Vue single-file component does). */
const MODULE_BLOCKS = new Set(['js', 'mjs', 'ts', 'tsx', 'jsx', 'vue']);

export interface SnippetImport {
  specifier: string;
  /** Value names imported (`import { a, b as c }` → a, b); type-only names are left out. */
  names: string[];
  /** Where it was found, for the assertion message. */
  where: string;
}

/** Every import in the module code blocks of `markdown`: static, side-effect, dynamic and import.meta.resolve. */
export function snippetImports(markdown: string, file: string): SnippetImport[] {
  const found: SnippetImport[] = [];
  for (const block of markdown.matchAll(/^```(\w+)\n([\s\S]*?)^```/gm)) {
    const [, language = '', code = ''] = block;
    if (!MODULE_BLOCKS.has(language)) continue;
    const line = markdown.slice(0, block.index).split('\n').length;
    const where = `${file}:${line} (${language})`;
    for (const match of code.matchAll(
      /^\s*import\s+(type\s+)?(?:([\w$]+)\s*,?\s*)?(?:\{([^}]*)\}\s*)?(?:\*\s+as\s+[\w$]+\s*)?from\s+['"]([^'"]+)['"]/gm,
    )) {
      const [, typeOnly, , braces = '', specifier = ''] = match;
      const names = typeOnly
        ? []
        : braces
            .split(',')
            .map((part) => part.trim())
            .filter((part) => part && !part.startsWith('type '))
            .map((part) => part.split(/\s+as\s+/)[0] as string);
      found.push({ specifier, names, where });
    }
    for (const match of code.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm))
      found.push({ specifier: match[1] as string, names: [], where });
    for (const match of code.matchAll(/(?:import|import\.meta\.resolve)\(\s*['"]([^'"]+)['"]\s*\)/g))
      found.push({ specifier: match[1] as string, names: [], where });
  }
  return found;
}

/** Targets of the relative links and images of `markdown` (no scheme, no in-page anchor), anchors cut off. */
export function relativeLinks(markdown: string): string[] {
  const withoutCode = markdown.replace(/^```[\s\S]*?^```/gm, '');
  return [...withoutCode.matchAll(/!?\[[^\]]*\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] as string)
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target) && !target.startsWith('#'))
    .map((target) => target.split('#')[0] as string);
}

/** What a clone has and an installed package has not, for `cloneOnlyMentions`. */
export interface CloneOnly {
  /** Top-level folders of the repository that the package leaves out (`test`, `.ci`, `demo`, …). */
  folders: string[];
  /** The project's own npm scripts (`demo`, `provider`, `build`, …): `npm run x` means nothing in a merchant's app. */
  scripts: string[];
}

/** Every mention in `markdown` of something that exists only in a clone: one of its folders, one of its npm scripts, the demo. */
export function cloneOnlyMentions(markdown: string, { folders, scripts }: CloneOnly): string[] {
  const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const patterns = [
    // `test/package/`, `.ci/run`, `scripts/readme-sri.ts`: a folder of the clone at the start of a path (not `obv-link/proxy`).
    ...folders.map((folder) => new RegExp(`(?<![\\w./@-])${escape(folder)}/`, 'g')),
    ...scripts.map((script) => new RegExp(`\\bnpm (?:run ${escape(script)}|${escape(script)})\\b(?!-)`, 'g')),
    /\bnpm (?:test|start)\b/g,
    /\b(?:the )?demo(?:'s)? (?:shop|panel)\b/gi,
    /<!-- \/?clone-only -->/g,
  ];
  return [
    ...new Set(
      markdown
        .split('\n')
        .flatMap((line, index) =>
          patterns.flatMap((pattern) =>
            [...line.matchAll(pattern)].map(
              (match) => `line ${index + 1}: ${match[0]} in "${line.trim().slice(0, 120)}"`,
            ),
          ),
        ),
    ),
  ];
}

/** What the clone at `root` has that its package leaves out: tracked top-level folders outside package.json `files`, and its npm scripts. */
export function cloneOnlyOf(root: string): CloneOnly {
  const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    files: string[];
    scripts: Record<string, string>;
  };
  const shipped = new Set(manifest.files.map((entry) => entry.split('/')[0]));
  const tracked = execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((file) => file.includes('/'));
  const folders = [...new Set(tracked.map((file) => file.split('/')[0] as string))].filter(
    (folder) => !shipped.has(folder),
  );
  return { folders, scripts: Object.keys(manifest.scripts) };
}
