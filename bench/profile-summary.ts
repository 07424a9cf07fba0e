// Reads a V8 .cpuprofile (from BENCH_CPU_PROF=1 or `node --cpu-prof`) and prints where the time went:
// self time by package/folder and by function, and inclusive time by package/folder (a sample counts
// once for every package on its stack, so native work such as a socket write is charged to its caller).
//   npx tsx bench/profile-summary.ts /tmp/obv-link-bench-profiles/obv-server-….cpuprofile [top]
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** `node_modules/express/…` → `express`; project files → their folder; Node internals → `node:`. */
function owner(url: string): string {
  if (url === '') return '(native/idle)';
  if (url.startsWith('node:')) return 'node: internals';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  const project = /\/(proxy|demo|widget|test)\/(.*)\/[^/]+$/.exec(url);
  return project ? `${project[1]}/${project[2]}` : url;
}

function summarizeProfile(file: string, top: number): string {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const inclusiveByOwner = new Map<string, number>();
  const selfByFunction = new Map<string, number>();
  const selfByOwner = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, index) => {
    const node = byId.get(id);
    const delta = (profile.timeDeltas[index] ?? 0) / 1000;
    if (!node) return;
    const { functionName, url, lineNumber } = node.callFrame;
    if (functionName === '(idle)' || functionName === '(program)' || functionName === '(garbage collector)') {
      selfByOwner.set(functionName, (selfByOwner.get(functionName) ?? 0) + delta);
      total += delta;
      return;
    }
    const key = `${functionName || '(anonymous)'} ${url.replace(/^.*\/(node_modules|work\/main)\//, '')}:${lineNumber + 1}`;
    selfByFunction.set(key, (selfByFunction.get(key) ?? 0) + delta);
    selfByOwner.set(owner(url), (selfByOwner.get(owner(url)) ?? 0) + delta);
    const onStack = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame && frame.url !== '') onStack.add(owner(frame.url));
    }
    for (const name of onStack) inclusiveByOwner.set(name, (inclusiveByOwner.get(name) ?? 0) + delta);
    total += delta;
  });
  const busy = total - (selfByOwner.get('(idle)') ?? 0);
  const list = (map: Map<string, number>): string =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([key, ms]) => `  ${ms.toFixed(1).padStart(9)} ms ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${key}`)
      .join('\n');
  return `${file}\n  ${total.toFixed(0)} ms sampled, ${busy.toFixed(0)} ms busy (percentages of busy)\nby package/folder (self time):\n${list(selfByOwner)}\nby package/folder (inclusive):\n${list(inclusiveByOwner)}\nby function (self time):\n${list(selfByFunction)}`;
}

const [file, top = '25'] = process.argv.slice(2);
if (!file) {
  console.error('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top]');
  process.exit(2);
}
console.log(summarizeProfile(file, Number(top)));
