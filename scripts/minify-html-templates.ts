// A Vite plugin for the element's build: strips the indentation of Lit `html` and `svg` templates, so the
// source can be laid out for reading while the bundle ships no whitespace (it counts against the gzip
// budget, see scripts/size.ts). The rule is JSX's: whitespace that contains a line break is not content.
import ts from 'typescript';
import type { Plugin } from 'vite';

const TAGS = new Set(['html', 'svg']);

/** What lies beyond one end of a template part: the template's own delimiter, or a `${…}` expression. */
type Edge = 'delimiter' | 'expression';

/**
 * One static part of a template with its line-broken whitespace removed, or turned into a single space
 * where it separates words or attributes. It is removed next to a tag (`>`, `<`), at either end of the
 * template, and between two expressions; so `<p>\n  ${a}\n  ${b}\n</p>` becomes `<p>${a}${b}</p>` and
 * `<button\n  part="button"\n  class=${c}\n>` becomes `<button part="button" class=${c}>`.
 */
export function collapseTemplatePart(raw: string, before: Edge, after: Edge): string {
  return raw.replace(/\s*\n\s*/g, (match: string, offset: number) => {
    const end = offset + match.length;
    const previous = offset === 0 ? before : raw[offset - 1];
    const next = end === raw.length ? after : raw[end];
    const removable =
      previous === '>' ||
      next === '<' ||
      next === '>' ||
      previous === 'delimiter' ||
      next === 'delimiter' ||
      (previous === 'expression' && next === 'expression');
    return removable ? '' : ' ';
  });
}

/** `code` with every `html` and `svg` tagged template collapsed (see {@link collapseTemplatePart}); nothing else changes. */
export function collapseHtmlTemplates(code: string): string {
  const source = ts.createSourceFile('module.ts', code, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const edits: Array<{ start: number; end: number; text: string }> = [];
  const visit = (node: ts.Node): void => {
    if (ts.isTaggedTemplateExpression(node) && ts.isIdentifier(node.tag) && TAGS.has(node.tag.text)) {
      const { template } = node;
      const parts = ts.isNoSubstitutionTemplateLiteral(template)
        ? [template]
        : [template.head, ...template.templateSpans.map((span) => span.literal)];
      for (const part of parts) {
        // A part's token runs from "`" or "}" to "${" or "`": only the text between its delimiters changes.
        const opensTemplate = ts.isNoSubstitutionTemplateLiteral(part) || ts.isTemplateHead(part);
        const closesTemplate = ts.isNoSubstitutionTemplateLiteral(part) || ts.isTemplateTail(part);
        const start = part.getStart(source) + 1;
        const end = part.getEnd() - (closesTemplate ? 1 : 2);
        const raw = code.slice(start, end);
        const text = collapseTemplatePart(
          raw,
          opensTemplate ? 'delimiter' : 'expression',
          closesTemplate ? 'delimiter' : 'expression',
        );
        if (text !== raw) edits.push({ start, end, text });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  // From the end, so that earlier offsets stay valid.
  let result = code;
  for (const { start, end, text } of edits.sort((a, b) => b.start - a.start))
    result = result.slice(0, start) + text + result.slice(end);
  return result;
}

/** The plugin: applies {@link collapseHtmlTemplates} to the element's own modules (`widget/`). */
export function minifyHtmlTemplates(): Plugin {
  return {
    name: 'obv-minify-html-templates',
    apply: 'build',
    transform(code, id) {
      if (!/\/widget\/[^/]+\.ts$/.test(id) || !/\b(html|svg)`/.test(code)) return null;
      // Whitespace inside templates only; lines move, so no source map worth keeping (as for the CSS).
      return { code: collapseHtmlTemplates(code), map: null };
    },
  };
}
