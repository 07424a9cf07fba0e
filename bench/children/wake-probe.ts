// A process that does nothing but wake up every millisecond, beside the shopper's flows: how late it
// wakes is the machine's scheduling stall, which no code of ours causes or can shorten. It is forked by
// the bench like the demo server, so it waits for a CPU as the server does (the same session, hence the
// same autogroup; Chromium has its own). The shopper section reads the worst lateness inside each flow's
// window (bank redirect → account shown): a slow flow in which this process was held back too is the
// machine's, not the path's.
import { serveRpc } from '../lib/rpc.ts';

const wallClock = (): number => performance.timeOrigin + performance.now();
const PERIOD_MS = 1;
/** Lateness above this is noted (below it is a timer's ordinary jitter); at most this many are kept. */
const NOTED_MS = 2;
const KEPT = 100_000;

const late: Array<{ at: number; ms: number }> = [];
let expected = wallClock() + PERIOD_MS;
const tick = (): void => {
  const now = wallClock();
  const ms = now - expected;
  if (ms > NOTED_MS && late.length < KEPT) late.push({ at: now, ms });
  expected = wallClock() + PERIOD_MS;
  setTimeout(tick, PERIOD_MS);
};
setTimeout(tick, PERIOD_MS);

serveRpc({
  /** This process's id (the test stops it to make a stall it can see). */
  pid: () => process.pid,
  /** The longest stall that overlapped `from`…`to` (wall clock, ms), 0 if none; forgets those that ended by `to`. */
  worstBetween: ({ from, to }: { from: number; to: number }) => {
    let worst = 0;
    for (const stall of late) if (stall.at >= from && stall.at - stall.ms <= to) worst = Math.max(worst, stall.ms);
    // Noted in time order: those that ended by `to` serve no later window.
    const ended = late.findIndex((stall) => stall.at > to);
    late.splice(0, ended === -1 ? late.length : ended);
    return worst;
  },
});
