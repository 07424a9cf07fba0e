// `npm start` (proxy/cli.ts) for the tests that SIGKILL an instance: configured by environment the same
// way, plus the merchant events' timings from TEST_EVENT_TIMINGS (JSON EventTimings), which no
// operator setting offers (a test cannot wait the real schedule's hours). No signal handling: these
// processes are killed, never drained.
import { configFromEnv, createLogger, type EventTimings } from '../../proxy/index.ts';
import { startProxyServers } from '../../proxy/server.ts';

const config = configFromEnv();
const timings = process.env.TEST_EVENT_TIMINGS
  ? (JSON.parse(process.env.TEST_EVENT_TIMINGS) as EventTimings)
  : undefined;
await startProxyServers(config, {
  logger: createLogger(config.logLevel),
  ...(timings ? { eventTimings: timings } : {}),
});
