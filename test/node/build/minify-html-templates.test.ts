// The build step that lets the element's templates be indented: line-broken whitespace in `html` and `svg`
// templates goes, everything else stays as written.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { collapseHtmlTemplates, collapseTemplatePart } from '../../../scripts/minify-html-templates.ts';

describe('collapsing html templates', () => {
  test('removes indentation between tags and around expressions', () => {
    const source =
      'const view = html`\n  <div class="a">\n    ${first}\n    ${second}\n    <p>${text}</p>\n  </div>\n`;';
    assert.equal(
      collapseHtmlTemplates(source),
      'const view = html`<div class="a">${first}${second}<p>${text}</p></div>`;',
    );
  });

  test('keeps one space between attributes and between words broken over lines', () => {
    const source =
      'html`<button\n  part="button"\n  class=${kind}\n  ?disabled=${off}\n>Link your\n  bank account</button>`';
    assert.equal(
      collapseHtmlTemplates(source),
      'html`<button part="button" class=${kind} ?disabled=${off}>Link your bank account</button>`',
    );
  });

  test('leaves whitespace without a line break alone: it may be content', () => {
    const source = 'html`<p>${a} ${b}</p>  <span> x </span>`';
    assert.equal(collapseHtmlTemplates(source), source);
  });

  test('reaches templates nested in expressions, and svg templates', () => {
    const source = 'html`<div>\n  ${ok ? html`\n    <p>yes</p>\n  ` : svg`\n    <path d=${d} />\n  `}\n</div>`';
    assert.equal(collapseHtmlTemplates(source), 'html`<div>${ok ? html`<p>yes</p>` : svg`<path d=${d} />`}</div>`');
  });

  test('changes no other template, string or code', () => {
    const source =
      'const c = css`\n  a { color: red; }\n`;\nconst t = `\n  line\n`;\nconst s = "html`\\n  x`";\nfoo`\n  y\n`;';
    assert.equal(collapseHtmlTemplates(source), source);
  });

  test('keeps escape sequences as written', () => {
    assert.equal(collapseHtmlTemplates('html`<p>a\\n  b</p>\n  <i></i>`'), 'html`<p>a\\n  b</p><i></i>`');
  });

  test('treats the ends of a part as the template edge or an expression', () => {
    assert.equal(collapseTemplatePart('\n  x\n  ', 'delimiter', 'delimiter'), 'x');
    assert.equal(collapseTemplatePart('\n  x\n  ', 'expression', 'expression'), ' x ');
    assert.equal(collapseTemplatePart('\n  ', 'expression', 'expression'), '');
  });
});
