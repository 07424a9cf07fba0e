// What the README and docs/ show a merchant in code: the import specifiers of their code blocks (with the
// names each imports) and their relative links, so the package tests can check both against the tarball.

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
    for (const match of code.matchAll(/^\s*import\s+(type\s+)?(?:([\w$]+)\s*,?\s*)?(?:\{([^}]*)\}\s*)?(?:\*\s+as\s+[\w$]+\s*)?from\s+['"]([^'"]+)['"]/gm)) {
      const [, typeOnly, , braces = '', specifier = ''] = match;
      const names = typeOnly ? [] : braces.split(',').map((part) => part.trim()).filter((part) => part && !part.startsWith('type '))
        .map((part) => part.split(/\s+as\s+/)[0] as string);
      found.push({ specifier, names, where });
    }
    for (const match of code.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm)) found.push({ specifier: match[1] as string, names: [], where });
    for (const match of code.matchAll(/(?:import|import\.meta\.resolve)\(\s*['"]([^'"]+)['"]\s*\)/g)) found.push({ specifier: match[1] as string, names: [], where });
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
