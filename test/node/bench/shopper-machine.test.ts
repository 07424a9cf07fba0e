// The two helpers that say whether the shopper's figures are the path's or the machine's: the wake probe
// must see a process held back (and only inside the window asked about), and the shopper's Chromium must
// run with a user's thread priorities, not root's raised ones.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { BenchChild, killAllChildren } from '../../../bench/lib/rpc.ts';
import { launchShopperBrowser } from '../../../bench/lib/shopper-browser.ts';

after(killAllChildren);
const wallClock = (): number => performance.timeOrigin + performance.now();

describe('bench wake probe', () => {
  it('reports a stall inside the window asked about, and none in a calm one', async () => {
    const probe = await BenchChild.spawn('wake-probe.ts', 'wake-probe');
    try {
      const pid = await probe.call<number>('pid');
      const calmFrom = wallClock();
      await sleep(100);
      const calm = await probe.call<number>('worstBetween', { from: calmFrom, to: wallClock() });
      assert.ok(calm < 20, `no stall of 20 ms in a quiet 100 ms (got ${calm.toFixed(1)} ms)`);

      const from = wallClock();
      process.kill(pid, 'SIGSTOP');
      await sleep(80);
      process.kill(pid, 'SIGCONT');
      await sleep(20);
      const to = wallClock();
      const stalled = await probe.call<number>('worstBetween', { from, to });
      assert.ok(stalled >= 60, `the stopped 80 ms are seen (got ${stalled.toFixed(1)} ms)`);
      // That stall ended before this window: it is not charged to it.
      await sleep(20);
      const later = await probe.call<number>('worstBetween', { from: wallClock() - 10, to: wallClock() });
      assert.ok(later < 60, `a later window does not inherit it (got ${later.toFixed(1)} ms)`);
    } finally {
      await probe.close();
    }
  });
});

/** Nice values of every thread of `pid`'s descendants (Chromium's processes, for this test process). */
function threadNiceness(pid: number): number[] {
  const nice: number[] = [];
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Fields after the command's closing parenthesis: state is the 3rd field, ppid the 4th, nice the 19th.
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1]!.split(' ');
      const ppid = Number(fields[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const visit = (at: number): void => {
    try {
      for (const tid of readdirSync(`/proc/${at}/task`)) {
        nice.push(Number(readFileSync(`/proc/${at}/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ')[16]));
      }
    } catch {
      return;
    }
    for (const child of children.get(at) ?? []) visit(child);
  };
  for (const child of children.get(pid) ?? []) visit(child);
  return nice;
}

describe('bench shopper browser', () => {
  it("runs Chromium with a user's thread priorities: none below nice 0", async () => {
    const { browser, asUser, priorities } = await launchShopperBrowser();
    try {
      const page = await browser.newPage();
      // A page with a frame drawn, so the renderer and the compositors have started their threads.
      await page.setContent('<h1>priorities</h1>');
      await page.evaluate(() => new Promise(requestAnimationFrame));
      const nice = threadNiceness(process.pid);
      assert.ok(nice.length > 10, `Chromium's threads are found (${nice.length})`);
      assert.equal(asUser, true, priorities);
      assert.deepEqual(
        nice.filter((value) => value < 0),
        [],
        `no thread raised above a user's priority (${priorities})`,
      );
    } finally {
      await browser.close();
    }
  });
});
