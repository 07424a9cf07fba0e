// `npm run demo`: the sandbox provider, the proxy and the checkout in one process, no env needed.
// PORT (default 8080) and HOST (default 127.0.0.1) are the only knobs.
import { PortInUseError, startDemo } from './start-demo.ts';

function portFromEnv(value: string | undefined): number {
  if (value === undefined || value === '') return 8080;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`PORT must be a whole number from 0 to 65535, got ${JSON.stringify(value)}`);
    process.exit(2);
  }
  return port;
}

const port = portFromEnv(process.env.PORT);

try {
  // Warnings and errors of the proxy still show (pino JSON lines); the normal flow stays quiet.
  // State in ./obv-link-data (OBV_DATA_DIR): a restart keeps the orders the proxy paid.
  const dataDir = process.env.OBV_DATA_DIR || 'obv-link-data';
  const demo = await startDemo({
    port,
    dataDir,
    logLevel: 'warn',
    ...(process.env.HOST ? { host: process.env.HOST } : {}),
  });
  console.log(`\nobv-link demo is running. Open ${demo.url}\n`);
  console.log('At the sandbox bank sign in as user_good / pass_good (or user_bad, user_locked, or press Cancel).');
  console.log('Press Ctrl+C to stop.');

  let stopping = false;
  const stop = () => {
    if (stopping) process.exit(1); // a second Ctrl+C forces the exit
    stopping = true;
    void demo.close().then(() => process.exit(0));
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
} catch (error) {
  if (error instanceof PortInUseError) {
    console.error(`Cannot start the demo: port ${error.port} is already in use.`);
    console.error(`Stop whatever uses it, or pick another port: PORT=${error.port + 1} npm run demo`);
    process.exit(1);
  }
  throw error;
}
