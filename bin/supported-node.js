// The first thing each bin does, before it loads anything that needs a newer Node: on a Node outside the
// package's `engines.node` (read from package.json, the one place the range is written), print one line
// naming the Node found, the one needed and what to do, and exit 1. Without it an old Node fails later
// and deeper, with a stack trace (no `node:sqlite` before 22.13).
//
// This file must itself load on an old Node: plain `fs` rather than `node:fs` (the prefix is Node 14.18+),
// and nothing imported but built-ins. Only the two forms `engines.node` uses are understood, joined by `||`:
// `^X.Y.Z` (from X.Y.Z within major X) and `>=X.Y.Z`; another form throws, so a changed range cannot
// slip past this check unread.
import { readFileSync } from 'fs';
import process from 'process';
import { URL } from 'url';

/** [major, minor, patch] of 'X.Y.Z'. */
function parts(version) {
  return version.split('.').map(Number);
}

function atLeast(version, floor) {
  for (let i = 0; i < 3; i += 1) {
    if (version[i] !== floor[i]) return version[i] > floor[i];
  }
  return true;
}

/** The ranges of an `engines.node` value: each its lowest version and whether it stays within that major. */
export function nodeRanges(range) {
  return range.split('||').map((part) => {
    const match = /^\s*(\^|>=)\s*(\d+\.\d+\.\d+)\s*$/.exec(part);
    if (!match) throw new Error(`bin/supported-node.js does not understand engines.node "${range}"`);
    return { floor: match[2], sameMajor: match[1] === '^' };
  });
}

/**
 * Undefined when Node `version` is in `range`; otherwise the version to name as needed: the floor on
 * the found Node's own major line when there is one (23.1.0 → 23.4.0), else the lowest floor.
 */
export function neededNode(version, range) {
  const here = parts(version);
  const ranges = nodeRanges(range);
  const fits = ranges.some(
    ({ floor, sameMajor }) => atLeast(here, parts(floor)) && (!sameMajor || parts(floor)[0] === here[0]),
  );
  if (fits) return undefined;
  const ownLine = ranges.find(({ floor }) => parts(floor)[0] === here[0] && !atLeast(here, parts(floor)));
  return ownLine
    ? ownLine.floor
    : ranges.map(({ floor }) => floor).sort((a, b) => (atLeast(parts(a), parts(b)) ? 1 : -1))[0];
}

/** The one line an operator reads when `command` runs on an unsupported Node. */
export function tooOldMessage(command, found, needed) {
  return `${command} needs Node.js ${needed} or later; this is Node.js ${found}. Install Node.js 24 LTS (https://nodejs.org/) and run it again.`;
}

/** Exits 1 with one line on stderr when this Node is outside the package's `engines.node`. */
export function exitUnlessSupportedNode(command) {
  const { engines } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  const needed = neededNode(process.versions.node, engines.node);
  if (needed === undefined) return;
  process.stderr.write(`${tooOldMessage(command, process.versions.node, needed)}\n`);
  process.exit(1);
}
