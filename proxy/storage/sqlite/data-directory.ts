// The data directory, checked before SQLite touches it (issue 39 §5): this user's, writable by nobody
// else, and holding no planted link where the proxy's files go.
//
// Why the owner and the mode: the proxy often runs as root in a container, on a mounted volume. In a
// directory another user owns, or one anyone may write to, that user can swap the database for a
// symbolic link between a check and SQLite's open, and have the proxy write into (or chmod) whatever
// the link points to. In a directory only this user can write, no one else (root aside) can change what
// its names point to, so the checks below stay true for as long as the proxy runs.
//
// Every refusal is a DataDirectoryError: one line naming the cause and the fix (proxy/cli.ts prints it).
import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  fchmodSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  statSync,
  statfsSync,
  type Stats,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import process from 'node:process';

/** The database file's name inside the data directory. */
export const DATABASE_FILE = 'obv-link.sqlite';
/** The file whose lock says "a proxy runs on this directory" (instance-lock.ts). */
export const LOCK_FILE = 'obv-link.lock';
/** Files SQLite keeps beside the database: each must be a plain file of ours, never a link. */
const COMPANION_SUFFIXES = ['-wal', '-shm', '-journal'];

/** Why the data directory cannot be used, in one line an operator acts on. */
export class DataDirectoryError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DataDirectoryError';
  }
}

/** The uid the proxy runs as; undefined where there are none (Windows: no owner or mode checks). */
function currentUid(): number | undefined {
  return process.geteuid?.();
}

const errorCode = (error: unknown): string | undefined => (error as NodeJS.ErrnoException | undefined)?.code;
const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, '0')}`;

/** Bytes this user may still write on the volume holding `path`, or undefined when it cannot be read. */
export function freeBytes(path: string): number | undefined {
  try {
    const volume = statfsSync(path);
    return volume.bavail * volume.bsize;
  } catch {
    return undefined;
  }
}

/** `12.3 MB`, `4.0 KB`, `512 bytes`: sizes in an operator's line. */
export function formatBytes(bytes: number): string {
  if (bytes < 1_000) return `${bytes} bytes`;
  const [value, unit] = bytes < 1e6 ? [bytes / 1e3, 'KB'] : bytes < 1e9 ? [bytes / 1e6, 'MB'] : [bytes / 1e9, 'GB'];
  return `${value.toFixed(1)} ${unit}`;
}

/** The one-line explanation of a full disk, at boot or in a backup. */
export function diskFullMessage(dir: string): string {
  const free = freeBytes(dir);
  return (
    `OBV_DATA_DIR ${dir}: the disk is full (${free === undefined ? 'free space unknown' : `${formatBytes(free)} free`} on its volume). ` +
    'Free space on that volume (or move the directory to a larger one), then start the proxy again; nothing stored so far is lost.'
  );
}

/**
 * Creates the data directory if needed (0700) and checks it and the files the proxy keeps in it; creates
 * the lock file and the database file (0600, never through a link) so that SQLite only ever opens files
 * checked here. Returns the directory's absolute path.
 * @throws DataDirectoryError naming the cause and the fix
 */
export function prepareDataDirectory(dataDir: string): string {
  const dir = resolve(dataDir);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    throw new DataDirectoryError(creationFailure(dir, error), { cause: error });
  }
  checkDirectory(dir);
  for (const name of [LOCK_FILE, DATABASE_FILE]) privateFile(dir, name, { create: true });
  for (const suffix of COMPANION_SUFFIXES) privateFile(dir, DATABASE_FILE + suffix, { create: false });
  return dir;
}

/**
 * The checks for reading the database without running a proxy on it (`backup`): the directory and the
 * file exist, and the file is a plain file, not a link. The owner is not required to be the caller: a
 * backup may run as root or as a backup user the directory lets in.
 * @throws DataDirectoryError
 */
export function existingDatabase(dataDir: string): { dir: string; path: string } {
  const dir = resolve(dataDir);
  let stats: Stats;
  try {
    stats = statSync(dir);
  } catch (error) {
    throw new DataDirectoryError(
      errorCode(error) === 'ENOENT'
        ? `OBV_DATA_DIR ${dir} does not exist: set OBV_DATA_DIR to the proxy's data directory (the one it runs with).`
        : `OBV_DATA_DIR ${dir} cannot be read (${errorCode(error) ?? (error as Error).message}): run this as the proxy's user.`,
      { cause: error },
    );
  }
  if (!stats.isDirectory())
    throw new DataDirectoryError(
      `OBV_DATA_DIR ${dir} is not a directory: set OBV_DATA_DIR to the proxy's data directory.`,
    );
  const path = join(dir, DATABASE_FILE);
  let file: Stats;
  try {
    file = lstatSync(path);
  } catch (error) {
    throw new DataDirectoryError(
      errorCode(error) === 'ENOENT'
        ? `OBV_DATA_DIR ${dir} holds no ${DATABASE_FILE}: set OBV_DATA_DIR to the directory the proxy runs with.`
        : `OBV_DATA_DIR ${dir}: ${DATABASE_FILE} cannot be read (${errorCode(error) ?? (error as Error).message}): run this as the proxy's user.`,
      { cause: error },
    );
  }
  if (file.isSymbolicLink()) throw new DataDirectoryError(symlinkRefusal(dir, DATABASE_FILE));
  if (!file.isFile())
    throw new DataDirectoryError(
      `OBV_DATA_DIR ${dir}: ${DATABASE_FILE} is not a regular file: remove it, or restore the database from a backup.`,
    );
  return { dir, path };
}

/** Why `mkdir -p dir` failed, worded by its cause. */
function creationFailure(dir: string, error: unknown): string {
  const code = creationCause(dir, error);
  const uid = currentUid();
  const user = uid === undefined ? "the proxy's user" : `the proxy's user (uid ${uid})`;
  switch (code) {
    case 'EACCES':
    case 'EPERM':
      return (
        `OBV_DATA_DIR ${dir} cannot be created: ${user} may not write in ${nearestExisting(dir)}. ` +
        `Create it for that user (mkdir -m 700 ${dir}; chown ${uid ?? '<user>'} ${dir}), or set OBV_DATA_DIR to a directory the user owns.`
      );
    case 'EROFS':
      return `OBV_DATA_DIR ${dir} is on a read-only filesystem: mount a writable volume there, or set OBV_DATA_DIR to a directory on one.`;
    case 'ENOTDIR':
    case 'EEXIST':
      return `OBV_DATA_DIR ${dir} cannot be created: ${nearestExisting(dir)} is a file, not a directory. Set OBV_DATA_DIR to a directory.`;
    case 'ENOSPC':
      return diskFullMessage(nearestExisting(dir));
    default:
      return `OBV_DATA_DIR ${dir} cannot be created (${code ?? (error as Error).message}).`;
  }
}

/**
 * The cause, read where `mkdir -p` stopped: Node's recursive mkdir reports ENOENT for a parent on a
 * read-only volume or one this user may not write in, so the parent is asked directly.
 */
function creationCause(dir: string, error: unknown): string | undefined {
  const code = errorCode(error);
  if (code !== 'ENOENT') return code;
  const parent = nearestExisting(dir);
  try {
    if (!statSync(parent).isDirectory()) return 'ENOTDIR';
    accessSync(parent, constants.W_OK | constants.X_OK);
  } catch (denied) {
    return errorCode(denied) ?? code;
  }
  return code;
}

/** The longest prefix of `path` that exists (where a failed `mkdir -p` stopped). */
function nearestExisting(path: string): string {
  let current = path;
  for (;;) {
    try {
      lstatSync(current);
      return current;
    } catch {
      const parent = dirname(current);
      if (parent === current) return current;
      current = parent;
    }
  }
}

/** The directory is a directory, this user's, writable by no one else, and writable by the proxy. */
function checkDirectory(dir: string): void {
  const stats = statSync(dir);
  if (!stats.isDirectory())
    throw new DataDirectoryError(`OBV_DATA_DIR ${dir} is not a directory: set OBV_DATA_DIR to a directory.`);
  const uid = currentUid();
  if (uid === undefined) return;
  if (stats.uid !== uid) {
    throw new DataDirectoryError(
      `OBV_DATA_DIR ${dir} belongs to uid ${stats.uid}, not to the proxy's user (uid ${uid}): ` +
        `chown ${uid} ${dir} (and what it holds), or give the proxy a directory of its own.`,
    );
  }
  const others = [stats.mode & 0o020 ? 'its group' : '', stats.mode & 0o002 ? 'every user' : '']
    .filter(Boolean)
    .join(' and ');
  if (others) {
    throw new DataDirectoryError(
      `OBV_DATA_DIR ${dir} is writable by ${others} (mode ${octal(stats.mode)}); it holds sealed credentials and payments: chmod 700 ${dir}.`,
    );
  }
  try {
    accessSync(dir, constants.W_OK | constants.X_OK);
  } catch (error) {
    throw new DataDirectoryError(
      errorCode(error) === 'EROFS'
        ? `OBV_DATA_DIR ${dir} is on a read-only filesystem: mount it writable, or set OBV_DATA_DIR to a directory on a writable volume.`
        : `OBV_DATA_DIR ${dir} is not writable by the proxy's user (uid ${uid}; mode ${octal(stats.mode)}): chmod 700 ${dir}.`,
      { cause: error },
    );
  }
}

function symlinkRefusal(dir: string, name: string): string {
  let target = '';
  try {
    target = ` (to ${readlinkSync(join(dir, name))})`;
  } catch {
    // Gone meanwhile: the refusal stands without the target.
  }
  return (
    `OBV_DATA_DIR ${dir}: ${name} is a symbolic link${target}; the proxy never follows links for its files. ` +
    `Put the file itself there (or remove the link for a new, empty ${name === LOCK_FILE ? 'lock' : 'database'}).`
  );
}

/** O_NOFOLLOW: opening a link fails (ELOOP); O_NONBLOCK: a planted FIFO cannot hang the open. 0 where absent. */
const NO_FOLLOW = (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

/**
 * `name` in `dir`, opened without following a link: a regular file owned by this user, its mode made 0600
 * (it holds sealed credentials and shoppers' names). Created 0600 when `create` and absent.
 */
function privateFile(dir: string, name: string, options: { create: boolean }, retried = false): void {
  const path = join(dir, name);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | NO_FOLLOW | (options.create ? constants.O_CREAT : 0), 0o600);
  } catch (error) {
    const code = errorCode(error);
    if (code === 'ENOENT' && !options.create) return;
    if (code === 'ELOOP' || lstatOrUndefined(path)?.isSymbolicLink())
      throw new DataDirectoryError(symlinkRefusal(dir, name), { cause: error });
    if (code === 'ENOSPC' || code === 'EDQUOT') throw new DataDirectoryError(diskFullMessage(dir), { cause: error });
    const stats = lstatOrUndefined(path);
    if (stats && !stats.isFile()) checkFile(dir, name, stats);
    if (code !== 'EACCES' || retried)
      throw new DataDirectoryError(
        `OBV_DATA_DIR ${dir}: ${name} cannot be opened (${code ?? (error as Error).message}).`,
        { cause: error },
      );
    unreadableFile(dir, name, error);
    return privateFile(dir, name, options, true);
  }
  try {
    const stats = fstatSync(fd);
    checkFile(dir, name, stats);
    if ((stats.mode & 0o777) !== 0o600) fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
}

function checkFile(dir: string, name: string, stats: Stats): void {
  if (!stats.isFile()) {
    throw new DataDirectoryError(
      `OBV_DATA_DIR ${dir}: ${name} is not a regular file: move it away${name === DATABASE_FILE ? ', or restore the database from a backup' : ''}.`,
    );
  }
  const uid = currentUid();
  if (uid !== undefined && stats.uid !== uid) {
    throw new DataDirectoryError(
      `OBV_DATA_DIR ${dir}: ${name} belongs to uid ${stats.uid}, not to the proxy's user (uid ${uid}): chown ${uid} ${join(dir, name)}.`,
    );
  }
}

/**
 * A file this user cannot even read (mode 0200, 0000): when it is a plain file of ours, its mode is put
 * right by name. Safe without a descriptor: no one else can rename entries of a directory that passed
 * checkDirectory.
 */
function unreadableFile(dir: string, name: string, cause: unknown): void {
  const path = join(dir, name);
  const stats = lstatOrUndefined(path);
  if (!stats) throw new DataDirectoryError(`OBV_DATA_DIR ${dir}: ${name} cannot be opened (EACCES).`, { cause });
  checkFile(dir, name, stats);
  try {
    chmodSync(path, 0o600);
  } catch (error) {
    throw new DataDirectoryError(
      `OBV_DATA_DIR ${dir}: ${name} is not readable by the proxy's user and its mode cannot be fixed (${errorCode(error)}): chmod 600 ${path}.`,
      { cause: error },
    );
  }
}
