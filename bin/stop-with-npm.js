// Run through npm (`npx obv-link-proxy`, or a package.json script), the bin is node under `sh -c` under npm.
// A SIGTERM or SIGINT sent to npx alone (`kill`, Docker, systemd) reaches npm, which passes it to the shell
// only; node never sees it. So, under npm only, the bin watches its parent shell and stops itself:
// - SIGTERM ends the shell at once: node's parent changes, and node stops as on SIGTERM.
// - SIGINT does not end the shell: a shell running a command defers SIGINT until the command ends (POSIX
//   "wait and cooperative exit"), so it would wait for node forever. But the shell, asleep in wait() with
//   nothing else to do, wakes up to take the signal: its voluntary context switches (/proc, Linux) grow
//   while node has neither stopped nor continued (the one other thing that wakes it). Node then stops as on
//   SIGINT; once node exits, the shell ends by the SIGINT it held, and npm with it. (A SIGINT in the few
//   milliseconds before this module loads is not seen: send it again, or SIGTERM.)
// Run directly (`node_modules/.bin/obv-link-proxy`, `exec` in a container, bash's `-c` that execs its one
// command), nothing is watched: the signals reach node itself, and a server started in the background
// outlives the shell that started it.
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';

const POLL_MS = 200;
/** A stop and continue of node (Ctrl-Z then fg) wakes the shell too (SIGCHLD): wakes this close to a SIGCONT are not a SIGINT. */
const CONTINUE_GRACE_MS = 2_000;
const SHELLS = new Set(['sh', 'dash', 'bash', 'ash', 'busybox', 'zsh', 'ksh', 'mksh']);

/** The parent's voluntary context switches, or undefined where /proc cannot tell (not Linux, or it is gone). */
function parentWakeUps(parent) {
  try {
    const match = /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(readFileSync(`/proc/${parent}/status`, 'utf8'));
    return match ? Number(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

function parentIsShell(parent) {
  try {
    return SHELLS.has(readFileSync(`/proc/${parent}/comm`, 'utf8').trim());
  } catch {
    return false;
  }
}

if (process.env.npm_lifecycle_event) {
  const parent = process.ppid;
  // Read at once: the shell went to sleep in wait() when node was exec'd, before this module loads.
  let wakeUps = parentIsShell(parent) ? parentWakeUps(parent) : undefined;
  let continuedAt = 0;
  /** A wake-up seen at the last poll: judged at the next one, once a SIGCONT that came with it has been handled. */
  let suspect = false;
  if (wakeUps !== undefined) process.on('SIGCONT', () => (continuedAt = Date.now()));
  const watch = setInterval(() => {
    if (process.ppid !== parent) {
      clearInterval(watch);
      process.kill(process.pid, 'SIGTERM');
      return;
    }
    if (wakeUps === undefined) return;
    if (suspect) {
      suspect = false;
      if (Date.now() - continuedAt >= CONTINUE_GRACE_MS) {
        clearInterval(watch);
        process.kill(process.pid, 'SIGINT');
        return;
      }
    }
    const now = parentWakeUps(parent);
    if (now === undefined || now === wakeUps) return;
    wakeUps = now;
    suspect = true;
  }, POLL_MS);
  watch.unref();
}
