// `npx obv-link-proxy init`: a production env file from what only the merchant knows (asked on a terminal,
// or given as flags), every secret generated here, the rest at safe defaults, each line saying what it is
// and where its value comes from. The file is checked as `npx obv-link-proxy` would read it before it is
// written (a typo in a URL is said now, not at the first start), created 0600, and an existing file is
// never replaced without --force. On a terminal a secret is not echoed as it is typed. Exit codes: 0
// written, 1 not written (the file exists, or cannot be written), 2 a usage error or a value the settings
// refuse, 130 Ctrl-C at a question.
import { randomBytes } from 'node:crypto';
import { constants, openSync, writeSync, closeSync, fchmodSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ConfigError, configFromEnv } from '../config/schema.ts';

/** What the merchant types: its flag, its variable, the question and where the value comes from. */
const ASKED = [
  {
    flag: 'base-url',
    env: 'OBV_BASE_URL',
    question: 'Provider API URL (https://…)',
    source: "the provider's API host for this environment (your provider onboarding: test or production)",
  },
  {
    flag: 'client-id',
    env: 'OBV_CLIENT_ID',
    question: 'Provider client id',
    source: 'the OAuth client id the provider issued for this environment',
  },
  {
    flag: 'client-secret',
    env: 'OBV_CLIENT_SECRET',
    question: 'Provider client secret',
    secret: true,
    source: 'the OAuth client secret the provider issued with that client id',
  },
  {
    flag: 'webhook-secret',
    env: 'OBV_WEBHOOK_SECRET',
    question: 'Provider webhook secret (whsec_…)',
    secret: true,
    source: 'the secret the provider signs your notifications with (whsec_…, from the provider)',
  },
  {
    flag: 'merchant-id',
    env: 'OBV_MERCHANT_ID',
    question: 'Merchant id at the provider',
    source: 'your merchant id at the provider (sent upstream with every verification)',
  },
  {
    flag: 'pgw-app-id',
    env: 'OBV_PGW_APP_ID',
    question: 'Transaction endpoint app id (x-pgw-app-id)',
    source: 'the x-pgw-app-id the provider issued for its transaction endpoint',
  },
  {
    flag: 'pgw-client-id',
    env: 'OBV_PGW_CLIENT_ID',
    question: 'Transaction endpoint client id (x-pgw-client-id)',
    source: 'the x-pgw-client-id the provider issued for its transaction endpoint',
  },
  {
    flag: 'public-url',
    env: 'OBV_PUBLIC_URL',
    question: 'Public https URL of this proxy',
    source:
      'the https origin browsers and the provider reach this proxy at (your domain, TLS ended in front of the proxy)',
  },
  {
    flag: 'events-url',
    env: 'OBV_EVENTS_URL',
    question: "Your server's URL for merchant events (empty: none)",
    source: "your server's endpoint for signed merchant events (docs/EVENTS.md)",
    optional: true,
  },
] as const;

const OPTIONS: NonNullable<ParseArgsConfig['options']> = {
  ...Object.fromEntries(ASKED.map(({ flag }) => [flag, { type: 'string' as const }])),
  'gateway-url': { type: 'string' },
  'database-url': { type: 'string' },
  out: { type: 'string' },
  force: { type: 'boolean' },
  yes: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

export interface InitIo {
  /** A terminal to ask on; undefined (not a TTY, or --yes) takes the flags only. */
  input?: NodeJS.ReadableStream;
  out: (text: string) => void;
  err: (text: string) => void;
  cwd: string;
  now?: Date;
}

const SAFE = /^[A-Za-z0-9_@%+=:,./-]*$/;
/**
 * A value as sh, systemd and Node's --env-file read it alike: bare when it can be, else single-quoted.
 * They escape differently inside quotes, so a value with a single quote or a line break is refused.
 */
function quoted(value: string): string {
  return SAFE.test(value) ? value : `'${value}'`;
}
const UNQUOTABLE = /['\n\r]/;

/** The generated secrets: the sealing key's id names the month, so a later key sorts after it. */
function generated(now: Date): Record<string, string> {
  const month = now.toISOString().slice(0, 7);
  return {
    OBV_SEALING_KEYS: `${month}:${randomBytes(32).toString('base64')}`,
    OBV_MERCHANT_API_KEY: randomBytes(32).toString('base64url'),
    OBV_EVENTS_SECRETS: `whsec_${randomBytes(32).toString('base64')}`,
  };
}

/** The file's text: a header, then each setting under a comment saying what it is and where it comes from. */
export function envFileText(values: Record<string, string>, now: Date): string {
  const entry = (comment: string, name: string) =>
    values[name] === undefined
      ? []
      : [`# ${comment[0]!.toUpperCase()}${comment.slice(1)}`, `${name}=${quoted(values[name]!)}`, ''];
  const lines = [
    `# obv-link proxy, production settings, written by \`npx obv-link-proxy init\` on ${now.toISOString().slice(0, 10)}.`,
    "# Secrets: keep this file 0600, readable by the proxy's user only, out of version control.",
    "# Load it into the proxy's environment (systemd EnvironmentFile=, docker run --env-file, node --env-file,",
    '# or: set -a; . ./.env.production; set +a), then: npx obv-link-proxy doctor, then: npx obv-link-proxy',
    '# Every setting: npx obv-link-proxy --help, and docs/PROXY.md "Configuration".',
    '',
    '## From your provider',
    ...ASKED.filter(({ flag }) => flag !== 'public-url' && flag !== 'events-url').flatMap(({ env, source }) =>
      entry(`${source}.`, env),
    ),
    ...entry("The provider's transaction host, when it is not OBV_BASE_URL (from the provider).", 'OBV_GATEWAY_URL'),
    '## Yours',
    ...entry(`${ASKED.find(({ flag }) => flag === 'public-url')!.source}.`, 'OBV_PUBLIC_URL'),
    ...entry(`${ASKED.find(({ flag }) => flag === 'events-url')!.source}.`, 'OBV_EVENTS_URL'),
    ...entry(
      'Where the state lives: PostgreSQL, a primary with fsync and synchronous_commit on (docs/SEVERAL-INSTANCES.md); the proxy makes its schema at start. Holds a password: this file stays 0600.',
      'OBV_DATABASE_URL',
    ),
    '## Generated by init (random; never reuse them elsewhere)',
    ...entry(
      'Seals every stored account token (AES-256-GCM); the same on every instance. Rotate: put a new id:key first, keep the old after it.',
      'OBV_SEALING_KEYS',
    ),
    ...entry(
      'The key your server sends (Authorization: Bearer …) to make link sessions and pay; never put it in a page.',
      'OBV_MERCHANT_API_KEY',
    ),
    ...entry(
      'Signs the merchant events; your endpoint checks each one with it (docs/EVENTS.md).',
      'OBV_EVENTS_SECRETS',
    ),
    '## Safe defaults (change them for your deployment)',
    ...entry(
      'Where the SQLite storage lives: a directory of its own on local, persistent disk (created 0700).',
      'OBV_DATA_DIR',
    ),
    ...entry(
      'Listen on loopback only, behind a TLS reverse proxy on this machine; 0.0.0.0 behind a load balancer.',
      'HOST',
    ),
    ...entry('The plain-HTTP port your TLS proxy forwards to.', 'PORT'),
    ...entry('The TLS proxy in front is on this machine; a hop count (1) behind a load balancer.', 'OBV_TRUST_PROXY'),
  ];
  return `${lines.join('\n').trimEnd()}\n`;
}

/**
 * What readline echoes on a terminal, passed on to `out` except while `muted`: then only the line end goes
 * through, so a typed secret never shows (nor stays in the terminal's scrollback), as with ssh or sudo.
 */
export function maskingWriter(out: (text: string) => void): { stream: Writable; muted: boolean } {
  const writer = {
    muted: false,
    stream: new Writable({
      write(chunk: Buffer | string, _encoding, done) {
        const text = String(chunk);
        if (!writer.muted) out(text);
        else if (/^[\r\n]+$/.test(text)) out('\n');
        done();
      },
    }),
  };
  return writer;
}

/** The answers, or undefined when the person pressed Ctrl-C. */
async function ask(
  input: NodeJS.ReadableStream,
  out: (text: string) => void,
  missing: (typeof ASKED)[number][],
): Promise<Record<string, string> | undefined> {
  // On a terminal readline echoes what is typed itself (raw mode), through `writer`, which mutes a secret;
  // from a pipe nothing is echoed at all.
  const terminal = (input as Partial<NodeJS.ReadStream>).isTTY === true;
  const writer = maskingWriter(out);
  const readline = createInterface({ input, output: terminal ? writer.stream : undefined, terminal });
  let interrupted = false;
  // In raw mode Ctrl-C reaches readline, not the process: end the questions, nothing written.
  readline.on('SIGINT', () => {
    interrupted = true;
    readline.close();
  });
  // The iterator keeps lines that arrive before their question (a paste, a pipe); an ended input answers "".
  const lines = readline[Symbol.asyncIterator]();
  const answers: Record<string, string> = {};
  try {
    for (const item of missing) {
      out(`${item.question}${'secret' in item ? ' (not shown as you type)' : ''}: `);
      writer.muted = 'secret' in item;
      const line = await lines.next();
      writer.muted = false;
      if (interrupted) return undefined;
      const answer = line.done ? '' : String(line.value).trim();
      if (answer) answers[item.flag] = answer;
    }
  } finally {
    writer.muted = false;
    readline.close();
  }
  return answers;
}

/** Runs `npx obv-link-proxy init <args>`; returns the exit code. */
export async function initFromCli(args: string[], io: InitIo): Promise<number> {
  let values: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    ({ values } = parseArgs({ args, options: OPTIONS, strict: true, allowPositionals: false }));
  } catch (error) {
    io.err(`init: ${error instanceof Error ? error.message : String(error)}; see npx obv-link-proxy init --help\n`);
    return 2;
  }
  const now = io.now ?? new Date();
  const file = resolve(io.cwd, (values.out as string | undefined) ?? '.env.production');
  const given: Record<string, string> = {};
  for (const { flag } of ASKED) if (typeof values[flag] === 'string' && values[flag] !== '') given[flag] = values[flag];
  const unanswered = ASKED.filter(({ flag }) => given[flag] === undefined);
  if (io.input && !values.yes && unanswered.length > 0) {
    const answers = await ask(io.input, io.out, unanswered);
    if (!answers) {
      io.err('\ninit: interrupted; nothing written\n');
      return 130;
    }
    Object.assign(given, answers);
  }
  const databaseUrl = typeof values['database-url'] === 'string' ? values['database-url'] : undefined;
  const unwritable = [
    ...ASKED.filter(({ flag }) => given[flag] !== undefined && UNQUOTABLE.test(given[flag])).map(({ flag }) => flag),
    ...(databaseUrl !== undefined && UNQUOTABLE.test(databaseUrl) ? ['database-url'] : []),
  ];
  if (unwritable.length > 0) {
    io.err(
      `init: ${unwritable.map((flag) => `--${flag}`).join(', ')} has a single quote or a line break, which env files do not read alike; nothing written\n`,
    );
    return 2;
  }
  const missing = ASKED.filter((item) => !('optional' in item) && given[item.flag] === undefined);
  if (missing.length > 0) {
    io.err(
      `init: missing ${missing.map(({ flag }) => `--${flag}`).join(', ')} (only you know these; see npx obv-link-proxy init --help)\n`,
    );
    return 2;
  }

  const secrets = generated(now);
  const settings: Record<string, string> = {};
  for (const { flag, env } of ASKED) if (given[flag] !== undefined) settings[env] = given[flag];
  if (typeof values['gateway-url'] === 'string') settings.OBV_GATEWAY_URL = values['gateway-url'];
  settings.OBV_SEALING_KEYS = secrets.OBV_SEALING_KEYS!;
  settings.OBV_MERCHANT_API_KEY = secrets.OBV_MERCHANT_API_KEY!;
  if (settings.OBV_EVENTS_URL) settings.OBV_EVENTS_SECRETS = secrets.OBV_EVENTS_SECRETS!;
  // With PostgreSQL the state is there: no data directory (one storage, as the proxy's settings want).
  if (databaseUrl) settings.OBV_DATABASE_URL = databaseUrl;
  Object.assign(settings, {
    ...(databaseUrl ? {} : { OBV_DATA_DIR: 'obv-link-data' }),
    HOST: '127.0.0.1',
    PORT: '3000',
    OBV_TRUST_PROXY: 'loopback',
  });

  // Read as the proxy will read it: a value it would refuse at start is refused here, the file unwritten.
  try {
    configFromEnv(settings);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    io.err(`init: nothing written: ${error.message}\n`);
    return 2;
  }

  let fd: number;
  try {
    // O_EXCL: an existing file (or a link in its place) is never followed or replaced unless --force.
    const flags =
      constants.O_WRONLY |
      constants.O_CREAT |
      (values.force ? constants.O_TRUNC | constants.O_NOFOLLOW : constants.O_EXCL);
    fd = openSync(file, flags, 0o600);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    io.err(
      code === 'EEXIST'
        ? `init: ${file} exists: nothing written (add --force to replace it, or --out for another file)\n`
        : `init: cannot write ${file}: ${(error as Error).message}\n`,
    );
    return 1;
  }
  try {
    fchmodSync(fd, 0o600); // a replaced file keeps its old mode otherwise
    writeSync(fd, envFileText(settings, now));
  } finally {
    closeSync(fd);
  }
  io.out(
    `init: wrote ${file} (mode 0600) with a new sealing key${settings.OBV_EVENTS_SECRETS ? ', merchant API key and events secret' : ' and merchant API key'}.\n` +
      `Next: set -a; . ${file}; set +a; npx obv-link-proxy doctor${settings.OBV_EVENTS_SECRETS ? '\nGive your events endpoint OBV_EVENTS_SECRETS to check signatures with.' : ''}\n`,
  );
  return 0;
}
