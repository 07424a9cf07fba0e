// `npm run provider`: the sandbox provider alone, configured from PROVIDER_* variables (see env.ts).
import { pino } from 'pino';
import { readProviderEnv, ProviderEnvError } from './env.ts';
import { startProvider } from './index.ts';

async function main(): Promise<void> {
  const { options, logLevel } = readProviderEnv(process.env);
  const logger = pino({ name: 'obv-sandbox', level: logLevel });
  const provider = await startProvider({ ...options, logger });
  process.stdout.write(`obv sandbox provider listening on ${provider.url}\n`);

  const shutdown = () => {
    void provider.close().then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  process.stderr.write(`obv sandbox provider: ${error instanceof ProviderEnvError ? error.message : String(error)}\n`);
  process.exit(1);
});
