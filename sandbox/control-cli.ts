// `npx obv-link-sandbox <control>`: sets a sandbox control on a running sandbox through its HTTP routes
// (control-routes.ts), so a merchant tries a stale account, a failed verification, a slow or silent
// endpoint or a late or doubled notification without writing code. Exit codes: 0 done, 1 the sandbox
// refused or does not answer, 2 a usage error.
import { parseArgs } from 'node:util';
import { CONTROLS_PATH } from './control-routes.ts';
import type { ControlsStatus } from './controls.ts';
import { SANDBOX_CLIENTS } from './sandbox-data.ts';
import { providerEnvHelp } from './env.ts';
import { packageVersion } from './package-version.ts';

const DEFAULT_CLIENT = SANDBOX_CLIENTS[0]!;

export const CONTROL_USAGE = `Usage:
  npx obv-link-sandbox                          start the sandbox (the PROVIDER_* settings below; docs/SANDBOX.md)
  npx obv-link-sandbox <control> [options]      set a control on a running sandbox
  npx obv-link-sandbox --version                the package's version

Controls:
  stale [--consumer NAME] [--account TOKEN]     mark linked accounts stale (endpoint 4 then answers 422
                                                REAUTHORIZATION_REQUIRED); no filter marks every one
  fail-next --code CODE [--message TEXT] [--count N]
                                                the next N (1) verifications fail at the bank with CODE
                                                (ACCOUNT_NOT_VERIFIED, ACCOUNT_LOCKED, CONSUMER_CANCELLED, or your own)
  delay --endpoint verification|transaction --ms MS
                                                endpoint 2 or 4 waits MS milliseconds before every answer (0: off)
  timeout --endpoint verification|transaction [--count N]
                                                the next N (1) requests to endpoint 2 or 4 are never answered
  notify-late --ms MS [--count N]               the next N (1) notifications are sent MS milliseconds late
  notify-twice [--count N]                      the next N (1) notifications are delivered twice
  reset                                         every control off, stale marks cleared
  status                                        what is set now

Options:
  --url URL               the running sandbox (default http://127.0.0.1:$PROVIDER_PORT, else :4010)
  --client-id ID          sandbox client credentials (default ${DEFAULT_CLIENT.clientId} / ${DEFAULT_CLIENT.clientSecret})
  --client-secret SECRET
  -h, --help              this text

Exit codes: 0 done, 1 the sandbox refused or does not answer, 2 a usage error.

Settings of the sandbox it starts (environment variables; docs/SANDBOX.md "Options and environment"):
${providerEnvHelp()}
`;

export const CONTROL_COMMANDS = [
  'stale',
  'fail-next',
  'delay',
  'timeout',
  'notify-late',
  'notify-twice',
  'reset',
  'status',
] as const;
type Command = (typeof CONTROL_COMMANDS)[number];

class UsageError extends Error {}

const OPTIONS = {
  url: { type: 'string' },
  'client-id': { type: 'string' },
  'client-secret': { type: 'string' },
  consumer: { type: 'string' },
  account: { type: 'string' },
  code: { type: 'string' },
  message: { type: 'string' },
  count: { type: 'string' },
  endpoint: { type: 'string' },
  ms: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Which options each control takes (the rest are refused, so a typo is not silently ignored). */
const ALLOWED: Record<Command, readonly string[]> = {
  stale: ['consumer', 'account'],
  'fail-next': ['code', 'message', 'count'],
  delay: ['endpoint', 'ms'],
  timeout: ['endpoint', 'count'],
  'notify-late': ['ms', 'count'],
  'notify-twice': ['count'],
  reset: [],
  status: [],
};
const COMMON = ['url', 'client-id', 'client-secret', 'help'];

function integer(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new UsageError(`--${name} must be a whole number, got "${value}"`);
  return Number(value);
}

function required(name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

type Values = Partial<Record<keyof typeof OPTIONS, string | boolean>>;

/** The request body of `command` from its options (the sandbox validates it again and names the field). */
function bodyFor(command: Command, values: Values): Record<string, unknown> | undefined {
  const text = (name: keyof typeof OPTIONS) => values[name] as string | undefined;
  const defined = (body: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined));
  switch (command) {
    case 'stale':
      return defined({ consumer: text('consumer'), accountToken: text('account') });
    case 'fail-next':
      return defined({
        errorCode: required('code', text('code')),
        errorMessage: text('message'),
        count: integer('count', text('count')),
      });
    case 'delay':
      return { endpoint: required('endpoint', text('endpoint')), ms: integer('ms', required('ms', text('ms'))) };
    case 'timeout':
      return defined({ endpoint: required('endpoint', text('endpoint')), count: integer('count', text('count')) });
    case 'notify-late':
      return defined({ ms: integer('ms', required('ms', text('ms'))), count: integer('count', text('count')) });
    case 'notify-twice':
      return defined({ count: integer('count', text('count')) });
    case 'reset':
      return {};
    case 'status':
      return undefined;
  }
}

const plural = (count: number, word: string) => `${count} ${word}${count === 1 ? '' : 's'}`;

/** What is set now, in a few lines. */
export function describeStatus(status: ControlsStatus): string {
  const lines = [
    `stale accounts: ${status.staleAccounts}`,
    `fail-next: ${status.failNext ? `${plural(status.failNext.count, 'verification')} with ${status.failNext.errorCode}` : 'off'}`,
    `delay: verification ${status.delayMs.verification} ms, transaction ${status.delayMs.transaction} ms`,
    `timeout: verification ${plural(status.timeouts.verification, 'request')}, transaction ${plural(status.timeouts.transaction, 'request')}`,
    `notify-late: ${status.notifyLate.count > 0 ? `${plural(status.notifyLate.count, 'notification')} ${status.notifyLate.ms} ms late` : 'off'}`,
    `notify-twice: ${status.notifyTwice > 0 ? plural(status.notifyTwice, 'notification') : 'off'}`,
  ];
  return lines.join('\n');
}

/** The problem's detail and each field it names, for a refused control. */
function describeProblem(status: number, body: unknown): string {
  const problem = (typeof body === 'object' && body !== null ? body : {}) as {
    detail?: string;
    errors?: { path: string; message: string }[];
  };
  const fields = (problem.errors ?? []).map((error) => `\n  ${error.path}: ${error.message}`).join('');
  return `the sandbox refused (${status}): ${problem.detail ?? 'no detail'}${fields}`;
}

/** Runs `npx obv-link-sandbox <argv>`; returns the exit code. `out`/`err` write the two streams. */
export async function runControlCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  out: (text: string) => void = (text) => process.stdout.write(text),
  err: (text: string) => void = (text) => process.stderr.write(text),
): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === 'help' || first === '--help' || first === '-h') {
    out(CONTROL_USAGE);
    return 0;
  }
  if (first === '--version' || first === '-v') {
    out(`obv-link ${packageVersion()}\n`);
    return 0;
  }
  if (!(CONTROL_COMMANDS as readonly string[]).includes(first)) {
    err(`obv-link-sandbox: unknown command "${first}"\n\n${CONTROL_USAGE}`);
    return 2;
  }
  const command = first as Command;
  let values: Values;
  let body: Record<string, unknown> | undefined;
  try {
    try {
      ({ values } = parseArgs({ args: [...rest], options: OPTIONS, strict: true, allowPositionals: false }));
    } catch (error) {
      throw new UsageError(error instanceof Error ? error.message : String(error));
    }
    if (values.help) {
      out(CONTROL_USAGE);
      return 0;
    }
    const refused = Object.keys(values).filter((name) => !COMMON.includes(name) && !ALLOWED[command].includes(name));
    if (refused.length > 0)
      throw new UsageError(`${command} takes no ${refused.map((name) => `--${name}`).join(', ')}`);
    body = bodyFor(command, values);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    err(`obv-link-sandbox ${command}: ${error.message}\nSee npx obv-link-sandbox --help.\n`);
    return 2;
  }

  const base = ((values.url as string | undefined) ?? `http://127.0.0.1:${env.PROVIDER_PORT || '4010'}`).replace(
    /\/+$/,
    '',
  );
  // The sandbox may be mounted under a path: the routes follow the base URL's path.
  const target = `${base}${command === 'status' ? CONTROLS_PATH : `${CONTROLS_PATH}/${command}`}`;
  const url = URL.canParse(target) ? new URL(target) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    err(`obv-link-sandbox ${command}: --url must be an absolute http(s) URL, got "${base}"\n`);
    return 2;
  }
  const clientId = (values['client-id'] as string | undefined) ?? DEFAULT_CLIENT.clientId;
  const clientSecret = (values['client-secret'] as string | undefined) ?? DEFAULT_CLIENT.clientSecret;
  const authorization = `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(clientSecret)}`).toString('base64')}`;

  let response: Response;
  try {
    response = await fetch(url, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    const reason = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    err(
      `obv-link-sandbox ${command}: no sandbox answers at ${base} (${reason}). Start one with \`npx obv-link-sandbox\`, or pass --url.\n`,
    );
    return 1;
  }
  const answer: unknown = await response.json().catch(() => undefined);
  if (!response.ok) {
    const hint = response.status === 404 ? ' (is this a sandbox of this version? --url must be its base URL)' : '';
    err(`obv-link-sandbox ${command}: ${describeProblem(response.status, answer)}${hint}\n`);
    return 1;
  }
  const result = answer as { controls: ControlsStatus; marked?: number };
  if (result.marked !== undefined) out(`marked ${plural(result.marked, 'account')} stale\n`);
  out(`${describeStatus(result.controls)}\n`);
  return 0;
}
