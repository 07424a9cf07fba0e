// What `npx obv-link-proxy --help` and `npx obv-link-proxy <command> --help` print: text only, read
// before anything starts and without any setting, so it works on a machine with nothing configured.
import { settingsHelp } from '../config/settings-help.ts';
import { EVENT_TYPES } from '../storage/events.ts';

export const COMMAND_USAGE = {
  init: `Usage: npx obv-link-proxy init [options]

Writes a production env file (default .env.production, mode 0600): every secret generated (sealing key,
merchant API key, webhook and events secrets), the rest at safe defaults, each line commented with what
it is and where its value comes from. Asks on a terminal for what only you know (the secrets are not
shown as you type; Ctrl-C writes nothing); flags answer instead. Refuses to overwrite a file without
--force. Then: npx obv-link-proxy doctor.

Options:
  --base-url URL            the provider's API host (from your provider's onboarding)
  --gateway-url URL         the provider's transaction host, when it differs from --base-url
  --client-id ID            OAuth client id (from your provider)
  --client-secret SECRET    OAuth client secret (from your provider)
  --merchant-id ID          your merchant id at the provider
  --pgw-app-id ID           x-pgw-app-id of the transaction endpoint (from your provider)
  --pgw-client-id ID        x-pgw-client-id of the transaction endpoint (from your provider)
  --public-url URL          the proxy's public https URL (your domain)
  --events-url URL          your server's URL for merchant events (optional)
  --webhook-secret SECRET   the whsec_ secret your provider signs your notifications with
  --database-url URL        postgres://user:password@host:5432/db: state in PostgreSQL (several
                            instances) instead of the SQLite data directory (optional)
  --out FILE                the file to write (default .env.production)
  --force                   overwrite FILE
  --yes                     ask nothing: take flags only, fail naming what is missing
  -h, --help                this text
`,
  doctor: `Usage: npx obv-link-proxy doctor [--json]

Checks the configuration in the environment (as npx obv-link-proxy reads it) against the real world,
before traffic: the provider's TLS and credentials (a token), the public URL serving the return page over
https, your events endpoint answering a signed test event, the data directory's permissions, Redis
reachable and persistent, or PostgreSQL reachable, its schema's version, and a primary that persists
(fsync, synchronous_commit, not a standby). One line per check; exit code 1 if any fails, 2 for settings that do not parse.
Load an env file first: set -a; . ./.env.production; set +a

Options:
  --json        one JSON document ({ok, checks: [{name, ok, detail, fix?}]}) for CI
  -h, --help    this text
`,
  'send-test-event': `Usage: npx obv-link-proxy send-test-event [type]

Sends one signed sample event of type (or of every type) to OBV_EVENTS_URL, signed with
OBV_EVENTS_SECRETS, and prints each answer. Exit code 0 when every one was answered 2xx.
Types: ${EVENT_TYPES.join(', ')}
`,
  backup: `Usage: npx obv-link-proxy backup <file> [--overwrite]

A consistent copy of the SQLite storage in OBV_DATA_DIR (default ./obv-link-data) to <file>, taken while
the proxy runs (docs/PROXY.md "Backups"). Refuses an existing file without --overwrite.
`,
} as const;

export type Command = keyof typeof COMMAND_USAGE;
export const COMMANDS = Object.keys(COMMAND_USAGE) as Command[];

/** `npx obv-link-proxy --help`. */
export function proxyUsage(): string {
  return `Usage: npx obv-link-proxy [command] [--help] [--version]

Without a command: starts the proxy, configured from the environment (docs/PROXY.md). Going to
production: init, then doctor, then start (docs/GOING-TO-PRODUCTION.md).

Commands:
  init                      write a production env file, every secret generated
  doctor [--json]           check the settings against the provider, the public URL, the events
                            endpoint, the data directory, Redis or PostgreSQL, before traffic
  send-test-event [type]    send signed sample events to OBV_EVENTS_URL
  backup <file>             copy the SQLite storage while the proxy runs
  <command> --help          that command's options

Options:
  -h, --help                this text
  -v, --version             the package's version

Settings (environment variables):
${settingsHelp()}
`;
}
