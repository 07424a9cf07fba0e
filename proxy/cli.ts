// `npm start`: configuration from the environment, one Express app with the proxy at its mount path.
import express from 'express';
import { ConfigError, configFromEnv, createLogger, createObvProxy } from './index.ts';

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
const proxy = createObvProxy({ ...config, logger });
const app = express();
app.disable('x-powered-by');
app.use(proxy.mountPath, proxy.router);
const server = app.listen(config.port, () => {
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  logger.info({ url: `http://localhost:${port}${proxy.mountPath}`, publicUrl: config.publicUrl }, 'obv-link proxy listening');
});
proxy.attachRelay(server);

function shutdown(): void {
  logger.info('shutting down');
  void proxy.close().finally(() => server.close(() => process.exit(0)));
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
