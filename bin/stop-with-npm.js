// Run through npm (`npx obv-link-proxy`, or a package.json script), the bin is node under `sh -c` under npm.
// A SIGTERM or SIGINT sent to npx (`kill`, Docker, systemd) reaches npm, which passes it to the shell;
// the shell ends without passing it on, and node would run on alone with its port open. So, under npm
// only, the bin watches its parent: once that process is gone, it stops as on SIGTERM (the CLI's graceful
// shutdown). Run directly (`node_modules/.bin/obv-link-proxy`, `exec` in a container), nothing is watched:
// the signals reach node itself, and a server started in the background outlives the shell that started it.
import process from 'node:process';
import { clearInterval, setInterval } from 'node:timers';

if (process.env.npm_lifecycle_event) {
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(watch);
    process.kill(process.pid, 'SIGTERM');
  }, 200);
  watch.unref();
}
