// Headings of a Markdown document as GitHub anchors them, for the tests that check links into the docs.

/** GitHub's heading anchor: the rendered text (HTML tags dropped, code spans kept) in lower case, punctuation dropped (hyphens kept), spaces to hyphens. */
export function githubSlug(heading: string): string {
  return heading
    .trim()
    .replace(/`[^`]*`|<[^>]*>/g, (match) => (match.startsWith('`') ? match : '')) // HTML tags go; a code span's text stays
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of a Markdown document, duplicates numbered (`-1`, `-2`) as GitHub does. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const counts = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split('\n')) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const base = githubSlug(heading[1] ?? '');
    const count = counts.get(base) ?? 0;
    counts.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}
