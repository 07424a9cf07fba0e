// `npm run provider` / `npx obv-link-sandbox`: the sandbox provider alone, configured from PROVIDER_*
// variables (see env.ts). With a control as its first argument (`npx obv-link-sandbox fail-next --code …`),
// it sets that control on a running sandbox instead (control-cli.ts) and exits.
import { pino } from 'pino';
import { runControlCli } from './control-cli.ts';
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

if (process.argv.length > 2) {
  process.exitCode = await runControlCli(process.argv.slice(2), process.env);
} else {
  main().catch((error: unknown) => {
    process.stderr.write(
      `obv sandbox provider: ${error instanceof ProviderEnvError ? error.message : String(error)}\n`,
    );
    process.exit(1);
  });
}
