// Reads a V8 .cpuprofile (from BENCH_CPU_PROF=1 or `node --cpu-prof`) and prints where the time went:
// self time by package/folder and by function, and inclusive time by package/folder (a sample counts
// once for every package on its stack, so native work such as a socket write is charged to its caller).
// With `--per N` (the requests the profile covers), also each step of a request (a notification, a start,
// a payment) in µs per request:
// every busy sample goes to the first step in STEPS that has a frame on its stack.
//   npx tsx bench/profile-summary.ts /tmp/obv-link-bench-profiles/obv-server-….cpuprofile [top] [--per 20000]
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

type Frame = ProfileNode['callFrame'];
const fn =
  (names: RegExp, url: RegExp = /./) =>
  (frame: Frame) =>
    names.test(frame.functionName) && url.test(frame.url);
const inUrl = (url: RegExp) => (frame: Frame) => url.test(frame.url);

/** A request's steps (a notification's, a start's, a payment's), most specific first: a sample belongs to the first whose frame is on its stack. */
const STEPS: [string, (frame: Frame) => boolean][] = [
  ["the profiler and the bench's RPC", (f) => /node:inspector|bench\/lib\/rpc/.test(f.url)],
  ['logging (pino, the line written)', inUrl(/node_modules\/(pino|sonic-boom|quick-format-unescaped)\//)],
  ['metrics (prom-client)', inUrl(/node_modules\/prom-client\//)],
  // A start's and a payment's call upstream (its socket write too), and what the proxy does with the answer.
  ["provider text scrubbing (the answer's echoes of the token)", inUrl(/upstream\/provider-text/)],
  [
    'upstream client (ky, fetch: undici, the bearer)',
    (f) =>
      /node_modules\/ky\/|node:internal\/deps\/undici|internal\/webstreams/.test(f.url) ||
      /upstream\/(http|verification-client|transaction-client|token-manager|upstream)\./.test(f.url),
  ],
  ['merchant API key check', inUrl(/http\/merchant-auth/)],
  ['rate limiting', inUrl(/node_modules\/express-rate-limit\//)],
  ['signature (Standard Webhooks HMAC)', inUrl(/common\/webhook-signature/)],
  [
    'schema checks (zod, the outcome read)',
    (f) => /node_modules\/zod\//.test(f.url) || /notifications\/outcome/.test(f.url),
  ],
  ['sealing (AES-GCM)', inUrl(/\/sealing\//)],
  ['ids (random)', (f) => /common\/(ids|random)/.test(f.url) || /^randomBytes|randomFillSync$/.test(f.functionName)],
  [
    'relay publish (the browser outcome, its words)',
    (f) =>
      /storage\/(memory\/|redis\/|sqlite\/)?result-bus|\/relay\/|\/words\//.test(f.url) ||
      /^publish$/.test(f.functionName),
  ],
  ['events outbox', inUrl(/\/events\//)],
  ['store (reads, writes, markers)', inUrl(/\/storage\//)],
  ['JSON parse of the body', fn(/^parseBody$/)],
  [
    'answer: socket write',
    fn(/^(writev|writeLatin1String|writeUtf8String|writeBuffer|writeString|writeGeneric)$/, /^$/),
  ],
  [
    'answer: headers, res.json',
    (f) =>
      (/_http_outgoing|_http_server/.test(f.url) &&
        /^(end|write|_send|writeHead|_storeHeader|setHeader|_implicitHeader|processHeader)$/.test(f.functionName)) ||
      /express\/lib\/response/.test(f.url) ||
      /node_modules\/(etag|content-type|mime|send)\//.test(f.url),
  ],
  [
    'body reading (body-parser)',
    inUrl(/node_modules\/(body-parser|raw-body|type-is|iconv-lite|bytes|on-finished|destroy)\//),
  ],
  [
    'our code (routes, notifications, verifications, payments, link sessions)',
    inUrl(/proxy\/(notifications|verifications|payments|link-sessions|routes|accounts|common|http|app\.ts)/),
  ],
  ['routing (Express, router)', inUrl(/node_modules\/(express|router|path-to-regexp|parseurl|finalhandler|debug)\//)],
  [
    'HTTP parsing and sockets (node:)',
    (f) => f.url.startsWith('node:') || /^(parserOn|_addHeaderLine)/.test(f.functionName),
  ],
];

function summarizeSteps(profile: Profile, requests: number): string {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const bySteps = new Map<string, number>();
  let busy = 0;
  profile.samples.forEach((id, index) => {
    const node = byId.get(id);
    const delta = (profile.timeDeltas[index] ?? 0) / 1000;
    if (!node || node.callFrame.functionName === '(idle)') return;
    busy += delta;
    let step = ['(garbage collector)', '(program)'].includes(node.callFrame.functionName)
      ? node.callFrame.functionName
      : 'other (native, microtasks)';
    const frames: Frame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) frames.push(byId.get(at)!.callFrame);
    for (const [name, matches] of STEPS)
      if (frames.some(matches)) {
        step = name;
        break;
      }
    bySteps.set(step, (bySteps.get(step) ?? 0) + delta);
  });
  const rows = [...bySteps.entries()]
    .sort((a, b) => b[1] - a[1])
    .map(
      ([step, ms]) =>
        `  ${((1000 * ms) / requests).toFixed(1).padStart(7)} µs ${((100 * ms) / busy).toFixed(1).padStart(5)}%  ${step}`,
    );
  return `by step, µs per request of ${requests} (wall time on the main thread while busy: ${((1000 * busy) / requests).toFixed(0)} µs):\n${rows.join('\n')}`;
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

const args = process.argv.slice(2);
const perAt = args.indexOf('--per');
const requests = perAt >= 0 ? Number(args.splice(perAt, 2)[1]) : undefined;
const [file, top = '25'] = args;
if (!file || (requests !== undefined && !(requests > 0))) {
  console.error('usage: tsx bench/profile-summary.ts <file.cpuprofile> [top] [--per <requests>]');
  process.exit(2);
}
console.log(summarizeProfile(file, Number(top)));
if (requests) console.log(summarizeSteps(JSON.parse(readFileSync(file, 'utf8')) as Profile, requests));
