// The package's README holds nothing that exists only in a clone. npm always packs the root README.md,
// so `npm pack` / `npm publish` cut its clone-only blocks (`<!-- clone-only -->` … `<!-- /clone-only -->`:
// the set-up commands of a clone) before packing (`prepack`: `strip`) and put the whole README back after
// (`postpack`: `restore`). The whole README waits in .readme-clone.md meanwhile (git-ignored, not packed).
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';

const OPEN = '<!-- clone-only -->';
const CLOSE = '<!-- /clone-only -->';
export const README = 'README.md';
export const KEPT = '.readme-clone.md';

/** `markdown` without its clone-only blocks (markers included); throws when the markers do not pair up. */
export function stripCloneOnly(markdown: string): string {
  let text = markdown;
  for (;;) {
    const start = text.indexOf(OPEN);
    const end = text.indexOf(CLOSE);
    if (start < 0 && end < 0) break;
    if (start < 0 || end < start) throw new Error(`${README}: "${CLOSE}" without its "${OPEN}"`);
    const next = text.indexOf(OPEN, start + OPEN.length);
    if (next >= 0 && next < end) throw new Error(`${README}: a "${OPEN}" block is not closed before the next one`);
    text = text.slice(0, start) + text.slice(end + CLOSE.length);
  }
  return text.replace(/\n{3,}/g, '\n\n');
}

function strip(): void {
  if (existsSync(KEPT)) {
    throw new Error(
      `${KEPT} exists: an earlier pack did not finish. Check ${README} against it, then move it back (mv ${KEPT} ${README}) or delete it.`,
    );
  }
  const whole = readFileSync(README, 'utf8');
  const packed = stripCloneOnly(whole);
  writeFileSync(KEPT, whole);
  writeFileSync(README, packed);
}

function restore(): void {
  if (existsSync(KEPT)) renameSync(KEPT, README);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const command = process.argv[2];
  if (command === 'strip') strip();
  else if (command === 'restore') restore();
  else throw new Error('usage: tsx scripts/package-readme.ts strip|restore');
}
