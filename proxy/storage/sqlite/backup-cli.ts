// `npx obv-link-proxy backup <file> [--overwrite]`: a consistent copy of OBV_DATA_DIR's database
// (backup.ts), taken while the proxy runs, and one line saying what was written. Reads only the storage
// settings (OBV_DATA_DIR, OBV_STORAGE, OBV_DATABASE_URL, OBV_REDIS_URL), so a backup job needs none of the proxy's secrets.
// Exit code 0 when the copy is written, 1 when it could not be, 2 for a bad command line or a proxy whose
// state is not in SQLite.
import { DEFAULT_DATA_DIR } from '../../config/limits.ts';
import { backupDatabase, BackupError } from './backup.ts';
import { DataDirectoryError, formatBytes } from './data-directory.ts';
import { SqliteUnavailableError } from './driver.ts';

const USAGE =
  'usage: obv-link-proxy backup <file> [--overwrite]   (the data directory is OBV_DATA_DIR, default ./obv-link-data)';

/** What to do instead when the state is not in SQLite. */
const OTHER_BACKUP: Record<string, string> = {
  postgres:
    "backup: this proxy keeps its state in PostgreSQL (OBV_DATABASE_URL): back up the database instead (pg_dump --schema=obv_link, or your provider's point-in-time recovery)",
  redis:
    'backup: this proxy keeps its state in Redis (OBV_REDIS_URL): back up Redis instead (its RDB snapshot or AOF file)',
};

export async function backupFromCli(
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
  writeError: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): Promise<number> {
  const overwrite = args.includes('--overwrite');
  const rest = args.filter((arg) => arg !== '--overwrite');
  const unknown = rest.find((arg) => arg.startsWith('--'));
  if (unknown !== undefined || rest.length !== 1 || rest[0] === '') {
    writeError(
      unknown === undefined
        ? `backup: name the file to write; ${USAGE}`
        : `backup: unknown option ${unknown}; ${USAGE}`,
    );
    return 2;
  }
  const storage = env.OBV_STORAGE || (env.OBV_DATABASE_URL ? 'postgres' : env.OBV_REDIS_URL ? 'redis' : 'sqlite');
  if (storage !== 'sqlite') {
    writeError(
      OTHER_BACKUP[storage] ??
        `backup: OBV_STORAGE=${storage} keeps nothing on disk to back up (the backup is of the SQLite storage, OBV_DATA_DIR)`,
    );
    return 2;
  }
  try {
    const result = await backupDatabase({ dataDir: env.OBV_DATA_DIR || DEFAULT_DATA_DIR, file: rest[0]!, overwrite });
    write(
      `backup: wrote ${result.file} (${formatBytes(result.bytes)}, mode 0600): a consistent copy of ${result.database}, checked, in ${result.tookMs} ms`,
    );
    return 0;
  } catch (error) {
    if (!(
      error instanceof BackupError ||
      error instanceof DataDirectoryError ||
      error instanceof SqliteUnavailableError
    ))
      throw error;
    writeError(`backup: ${error.message}`);
    return 1;
  }
}
