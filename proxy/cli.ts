// `npm start`: configuration from the environment, then the servers of proxy/server.ts (or a command:
// `--help` lists them and every setting). SIGTERM/SIGINT drain them (/readyz 503 for OBV_DRAIN_WINDOW,
// then in-flight requests finish, sockets get 1001) and the process exits 0 within OBV_DRAIN_WINDOW +
// OBV_SHUTDOWN_TIMEOUT plus a small margin, whatever is still open.
//
// A start that cannot happen for a reason the operator can fix (a setting, the data directory, a Node
// without node:sqlite) is one line on stderr naming the cause and the fix, and exit code 1: no stack.
import { ConfigError, configFromEnv, createLogger, DataDirectoryError } from './index.ts';
import { safeError } from './common/logger.ts';
import { shutdownBoundMs, startProxyServers } from './server.ts';
import { sendTestEventsFromCli } from './events/test-events-cli.ts';
import { backupFromCli } from './storage/sqlite/backup-cli.ts';
import { SqliteUnavailableError } from './storage/sqlite/driver.ts';
import { packageVersion } from './common/package-version.ts';
import { COMMAND_USAGE, COMMANDS, proxyUsage, type Command } from './cli/usage.ts';

const [command, ...args] = process.argv.slice(2);
// Help and version first: they start nothing and need no setting (cli/usage.ts).
if (command === '--version' || command === '-v') {
  process.stdout.write(`obv-link ${packageVersion()}\n`);
  process.exit(0);
}
if (command === '--help' || command === '-h' || command === 'help') {
  process.stdout.write(proxyUsage());
  process.exit(0);
}
if (
  command !== undefined &&
  (COMMANDS as string[]).includes(command) &&
  (args.includes('--help') || args.includes('-h'))
) {
  process.stdout.write(COMMAND_USAGE[command as Command]);
  process.exit(0);
}
// The commands load only when asked for, so a start reads no more than it needs.
// `npx obv-link-proxy init [flags]`: a production env file, every secret generated (cli/init.ts).
if (command === 'init') {
  const { initFromCli } = await import('./cli/init.ts');
  process.exit(
    await initFromCli(args, {
      input: process.stdin.isTTY ? process.stdin : undefined,
      out: (text) => process.stdout.write(text),
      err: (text) => process.stderr.write(text),
      cwd: process.cwd(),
    }),
  );
}
// `npx obv-link-proxy doctor [--json]`: the settings checked against the provider, the public URL, … (cli/doctor.ts).
if (command === 'doctor') {
  const { doctorFromCli } = await import('./cli/doctor.ts');
  process.exit(await doctorFromCli(args, process.env, (text) => process.stdout.write(text)));
}
// `npx obv-link-proxy send-test-event [type]`: signed samples to OBV_EVENTS_URL, then exit (events/test-events.ts).
if (command === 'send-test-event') process.exit(await sendTestEventsFromCli(args[0]));
// `npx obv-link-proxy backup <file> [--overwrite]`: a copy of OBV_DATA_DIR's database, then exit (storage/sqlite/backup.ts).
if (command === 'backup') process.exit(await backupFromCli(args));
if (command !== undefined) {
  process.stderr.write(`obv-link-proxy: unknown command ${JSON.stringify(command)}; see npx obv-link-proxy --help\n`);
  process.exit(2);
}

let config;
try {
  config = configFromEnv();
} catch (error) {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
  throw error;
}
const logger = createLogger(config.logLevel);
const shutdownTimeoutMs = shutdownBoundMs(config);

let running;
try {
  running = await startProxyServers(config, { logger });
} catch (error) {
  if (error instanceof DataDirectoryError || error instanceof SqliteUnavailableError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    logger.fatal({ err: safeError(error) }, 'could not start the proxy');
  }
  process.exit(1);
}
const servers = running;

let stopping = false;
function shutdown(signal: NodeJS.Signals): void {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down: draining requests and sockets');
  // The bound: the window, the requests and any payment under way (shutdownBoundMs); this covers anything that hangs after.
  setTimeout(() => {
    logger.warn('shutdown did not finish in time; exiting');
    process.exit(0);
  }, shutdownTimeoutMs + 2_000).unref();
  servers.shutdown().then(
    () => {
      logger.info('shut down');
      process.exit(0);
    },
    (error: unknown) => {
      logger.error({ err: safeError(error) }, 'shutdown failed');
      process.exit(1);
    },
  );
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
