// `npm start`: configuration from the environment, then the servers of proxy/server.ts. SIGTERM/SIGINT
// drain them (/readyz 503 for OBV_DRAIN_WINDOW, then in-flight requests finish, sockets get 1001) and the
// process exits 0 within OBV_DRAIN_WINDOW + OBV_SHUTDOWN_TIMEOUT plus a small margin, whatever is still open.
//
// A start that cannot happen for a reason the operator can fix (a setting, the data directory, a Node
// without node:sqlite) is one line on stderr naming the cause and the fix, and exit code 1: no stack.
import { ConfigError, configFromEnv, createLogger, DataDirectoryError } from './index.ts';
import { safeError } from './common/logger.ts';
import { shutdownBoundMs, startProxyServers } from './server.ts';
import { sendTestEventsFromCli } from './events/test-events-cli.ts';
import { backupFromCli } from './storage/sqlite/backup-cli.ts';
import { SqliteUnavailableError } from './storage/sqlite/driver.ts';

// `npx obv-link-proxy send-test-event [type]`: signed samples to OBV_EVENTS_URL, then exit (events/test-events.ts).
if (process.argv[2] === 'send-test-event') process.exit(await sendTestEventsFromCli(process.argv[3]));
// `npx obv-link-proxy backup <file> [--overwrite]`: a copy of OBV_DATA_DIR's database, then exit (storage/sqlite/backup.ts).
if (process.argv[2] === 'backup') process.exit(await backupFromCli(process.argv.slice(3)));

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
