// `npx obv-link-proxy init`: from flags or answers on a terminal, a 0600 env file the proxy starts with,
// every secret generated and fresh, every line commented; an existing file kept unless --force; a value the
// settings refuse, or one missing, is said and nothing is written.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { promisify } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { parseEnv } from 'node:util';
import { initFromCli, type InitIo } from '../../../proxy/cli/init.ts';
import { configFromEnv } from '../../../proxy/config/schema.ts';

const run = promisify(execFile);

const FLAGS = {
  'base-url': 'https://api.provider.example',
  'client-id': 'shop-client',
  'client-secret': 'a secret with spaces, $HOME & a "quote"',
  'webhook-secret': `whsec_${Buffer.from('the-provider-webhook-secret-for-this-test').toString('base64')}`,
  'merchant-id': 'merchant-42',
  'pgw-app-id': 'app-1',
  'pgw-client-id': 'pgw-client-1',
  'public-url': 'https://pay.shop.example',
  'events-url': 'https://shop.example/obv-events',
};
const asArgs = (flags: Record<string, string>) =>
  Object.entries(flags).flatMap(([flag, value]) => [`--${flag}`, value]);

function io(dir: string, input?: NodeJS.ReadableStream): InitIo & { output: string[]; errors: string[] } {
  const output: string[] = [];
  const errors: string[] = [];
  return { input, cwd: dir, out: (text) => output.push(text), err: (text) => errors.push(text), output, errors };
}

describe('npx obv-link-proxy init', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'obv-init-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('with flags: a 0600 file the proxy starts with, fresh secrets, every setting under a comment', async () => {
    const out = path.join(dir, 'flags.env');
    const result = io(dir);
    assert.equal(await initFromCli([...asArgs(FLAGS), '--out', out], result), 0, result.errors.join(''));
    assert.equal(statSync(out).mode & 0o777, 0o600);
    const text = readFileSync(out, 'utf8');
    const env = parseEnv(text);
    const config = configFromEnv(env);
    assert.equal(config.clientSecret, FLAGS['client-secret']);
    assert.equal(config.publicUrl, FLAGS['public-url']);
    assert.equal(config.sandbox, false);
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.sealingKeys?.length, 1);
    assert.ok((config.merchantApiKey ?? '').length >= 32);
    assert.equal(config.eventsSecrets?.length, 1);
    // Each setting line follows a comment line.
    const lines = text.split('\n');
    lines.forEach((line, index) => {
      if (/^[A-Z_]+=/.test(line)) assert.match(lines[index - 1]!, /^# \S/, `a comment above ${line.split('=')[0]}`);
    });
    // The sh reading of the file gives the same values (the secret with a space and a quote included).
    const { stdout } = await run('sh', ['-c', `set -a; . "${out}"; set +a; printf '%s' "$OBV_CLIENT_SECRET"`], {
      env: {},
    });
    assert.equal(stdout, FLAGS['client-secret']);

    // Another run generates other secrets.
    const second = path.join(dir, 'second.env');
    assert.equal(await initFromCli([...asArgs(FLAGS), '--out', second], io(dir)), 0);
    const again = parseEnv(readFileSync(second, 'utf8'));
    for (const name of ['OBV_SEALING_KEYS', 'OBV_MERCHANT_API_KEY', 'OBV_EVENTS_SECRETS'])
      assert.notEqual(again[name], env[name], name);
  });

  test('refuses to replace a file without --force, and replaces it (0600 again) with it', async () => {
    const out = path.join(dir, 'existing.env');
    writeFileSync(out, 'KEEP=me\n', { mode: 0o644 });
    const refused = io(dir);
    assert.equal(await initFromCli([...asArgs(FLAGS), '--out', out], refused), 1);
    assert.match(refused.errors.join(''), /exists: nothing written \(add --force/);
    assert.equal(readFileSync(out, 'utf8'), 'KEEP=me\n');
    assert.equal(await initFromCli([...asArgs(FLAGS), '--out', out, '--force'], io(dir)), 0);
    assert.equal(statSync(out).mode & 0o777, 0o600);
    assert.match(readFileSync(out, 'utf8'), /^OBV_CLIENT_ID=shop-client$/m);
  });

  test('asks on a terminal for what the flags did not say (an empty events URL: no events)', async () => {
    const out = path.join(dir, 'asked.env');
    const input = new PassThrough();
    const answers = { ...FLAGS, 'events-url': '' };
    const { 'client-id': clientId, 'public-url': publicUrl, ...flags } = answers;
    input.end(`${clientId}\n${publicUrl}\n\n`);
    const result = io(dir, input);
    assert.equal(
      await initFromCli(
        [...asArgs(Object.fromEntries(Object.entries(flags).filter(([, value]) => value))), '--out', out],
        result,
      ),
      0,
      result.errors.join(''),
    );
    assert.match(
      result.output.join(''),
      /Provider client id: .*Public https URL of this proxy: .*merchant events \(empty: none\): /s,
    );
    const env = parseEnv(readFileSync(out, 'utf8'));
    assert.equal(env.OBV_CLIENT_ID, clientId);
    assert.equal(env.OBV_PUBLIC_URL, publicUrl);
    assert.equal(env.OBV_EVENTS_URL, undefined);
    assert.equal(env.OBV_EVENTS_SECRETS, undefined);
  });

  test('without a terminal (or with --yes) names every missing flag; a value the settings refuse writes nothing', async () => {
    const { 'client-secret': _secret, 'merchant-id': _merchant, ...some } = FLAGS;
    const missing = io(dir);
    assert.equal(await initFromCli([...asArgs(some), '--out', path.join(dir, 'missing.env')], missing), 2);
    assert.match(missing.errors.join(''), /missing --client-secret, --merchant-id/);

    const out = path.join(dir, 'refused.env');
    const refused = io(dir);
    assert.equal(
      await initFromCli([...asArgs({ ...FLAGS, 'public-url': 'http://pay.shop.example' }), '--out', out], refused),
      2,
    );
    assert.match(refused.errors.join(''), /nothing written: .*OBV_PUBLIC_URL/s);
    assert.throws(() => statSync(out), /ENOENT/);
  });

  test('--database-url: OBV_DATABASE_URL instead of a data directory; a URL that is not postgres writes nothing', async () => {
    const out = path.join(dir, 'postgres.env');
    const databaseUrl = 'postgres://obv:p%40ss%20word@db.internal.example:5432/shop?sslmode=verify-full';
    const result = io(dir);
    assert.equal(
      await initFromCli([...asArgs(FLAGS), '--database-url', databaseUrl, '--out', out], result),
      0,
      result.errors.join(''),
    );
    const text = readFileSync(out, 'utf8');
    const env = parseEnv(text);
    assert.equal(env.OBV_DATABASE_URL, databaseUrl);
    assert.equal(env.OBV_DATA_DIR, undefined, 'no data directory: the state is in PostgreSQL');
    assert.match(text, /^# Where the state lives: PostgreSQL.*\nOBV_DATABASE_URL=/m);
    const config = configFromEnv(env);
    assert.equal(config.storage, 'postgres');
    assert.equal(config.databaseUrl, databaseUrl);

    const refused = io(dir);
    const mysql = path.join(dir, 'mysql.env');
    assert.equal(
      await initFromCli(
        [...asArgs(FLAGS), '--database-url', 'mysql://db.internal.example/shop', '--out', mysql],
        refused,
      ),
      2,
    );
    assert.match(refused.errors.join(''), /nothing written: .*OBV_DATABASE_URL/s);
    assert.throws(() => statSync(mysql), /ENOENT/);
  });

  test('on a terminal (a pseudo-terminal), the secrets typed are not echoed; the other answers are', async () => {
    const out = path.join(dir, 'terminal.env');
    const {
      'client-secret': clientSecret,
      'webhook-secret': webhookSecret,
      'merchant-id': merchantId,
      ...rest
    } = {
      ...FLAGS,
      'client-secret': 'typed-client-secret-9f2c',
    };
    const answers: [question: string, answer: string][] = [
      ['Provider client secret', clientSecret],
      ['Provider webhook secret', webhookSecret],
      ['Merchant id at the provider', merchantId],
    ];
    const { code, transcript } = await inPseudoTerminal(
      [process.execPath, '--import', 'tsx', 'proxy/cli.ts', 'init', ...asArgs(rest), '--out', out],
      answers,
    );
    assert.equal(code, 0, transcript);
    assert.match(transcript, /Provider client secret \(not shown as you type\): /);
    assert.match(transcript, /Provider webhook secret \(whsec_…\) \(not shown as you type\): /);
    assert.ok(!transcript.includes(clientSecret), `the client secret was echoed:\n${transcript}`);
    assert.ok(!transcript.includes(webhookSecret.slice(6, 20)), `the webhook secret was echoed:\n${transcript}`);
    assert.ok(transcript.includes(merchantId), 'a value that is not a secret is echoed as typed');
    const env = parseEnv(readFileSync(out, 'utf8'));
    assert.deepEqual(
      [env.OBV_CLIENT_SECRET, env.OBV_WEBHOOK_SECRET, env.OBV_MERCHANT_ID],
      [clientSecret, webhookSecret, merchantId],
    );
  });

  test('on a terminal, Ctrl-C at a question ends init: nothing written, exit code 130', async () => {
    const out = path.join(dir, 'interrupted.env');
    const { 'client-secret': _secret, ...rest } = FLAGS;
    const { code, transcript } = await inPseudoTerminal(
      [process.execPath, '--import', 'tsx', 'proxy/cli.ts', 'init', ...asArgs(rest), '--out', out],
      [['Provider client secret', '\u0003']],
    );
    assert.equal(code, 130, transcript);
    assert.match(transcript, /init: interrupted; nothing written/);
    assert.throws(() => statSync(out), /ENOENT/);
  });
});

/**
 * Runs `command` in a pseudo-terminal (python3's pty module: the child sees a TTY on stdin and stdout, as
 * in a shell) from the repository's root, typing each answer (then Enter) once its question has appeared;
 * resolves with the exit code and everything the terminal showed.
 */
async function inPseudoTerminal(
  command: string[],
  answers: [question: string, answer: string][],
): Promise<{ code: number; transcript: string }> {
  const driver = `
import json, os, pty, select, sys, time
command, answers = json.loads(sys.argv[1]), json.loads(sys.argv[2])
pid, fd = pty.fork()
if pid == 0:
    os.execvp(command[0], command)
seen, offset, deadline = b"", 0, time.time() + 60
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        seen += data
    if answers:
        at = seen.find(answers[0][0].encode(), offset)
        if at >= 0 and seen.rstrip().endswith(b":"):
            offset = len(seen)
            os.write(fd, answers.pop(0)[1].encode() + b"\\r")
else:
    os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
print(json.dumps({"code": os.waitstatus_to_exitcode(status), "transcript": seen.decode("utf-8", "replace")}))
`;
  const { stdout } = await run('python3', ['-c', driver, JSON.stringify(command), JSON.stringify(answers)], {
    cwd: path.resolve(import.meta.dirname, '../../..'),
    timeout: 90_000,
  });
  return JSON.parse(stdout) as { code: number; transcript: string };
}
