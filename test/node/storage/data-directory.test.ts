// The data directory checked at boot (issue 39 §5) and every way an open can fail, each refused with one
// line naming the cause and the fix: a directory of another user or writable by others, a database (or
// its lock, or its WAL) planted as a symbolic link, a file of another user, a read-only volume, a path
// through a file, a damaged database. And what is put right without asking: the file's mode, on a
// regular file of ours.
import assert from 'node:assert/strict';
import {
  chmodSync,
  chownSync,
  closeSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { DatabaseSync } from 'node:sqlite';
import { createLogger, DataDirectoryError } from '../../../proxy/index.ts';
import { createStorage } from '../../../proxy/storage/create-storage.ts';
import { DATABASE_FILE } from '../../../proxy/storage/sqlite/database.ts';
import { LOCK_FILE } from '../../../proxy/storage/sqlite/data-directory.ts';
import { mountSmallVolume, smallVolumeSkipReason } from '../../helpers/small-volume.ts';

const logger = createLogger('silent');
const uid = process.geteuid!();
/** Another user's uid, for files a root test hands to someone else (`nobody`). */
const OTHER_UID = 65_534;
const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'obv-datadir-'));
  dirs.push(dir);
  return dir;
};
after(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** The DataDirectoryError an open of `dataDir` throws (one line), or a failure when it opens. */
function refusal(dataDir: string): string {
  let storage;
  try {
    storage = createStorage({ kind: 'sqlite', dataDir, logger });
  } catch (error) {
    assert.ok(error instanceof DataDirectoryError, `a DataDirectoryError, not ${String(error)}`);
    assert.doesNotMatch(error.message, /\n/, 'one line');
    return error.message;
  }
  void storage.close();
  return assert.fail(`${dataDir} was accepted`);
}

async function opens(dataDir: string): Promise<void> {
  const storage = createStorage({ kind: 'sqlite', dataDir, logger });
  await storage.close();
}

describe('the data directory at boot', () => {
  test(
    "another user's directory is refused, naming its owner and the fix",
    { skip: uid !== 0 && 'needs root to give a directory to another user' },
    () => {
      const dir = join(newDir(), 'theirs');
      mkdirSync(dir, { mode: 0o700 });
      chownSync(dir, OTHER_UID, OTHER_UID);
      const message = refusal(dir);
      assert.match(
        message,
        new RegExp(
          `^OBV_DATA_DIR ${dir} belongs to uid ${OTHER_UID}, not to the proxy's user \\(uid 0\\): chown 0 ${dir}`,
        ),
      );
      assert.throws(() => lstatSync(join(dir, DATABASE_FILE)), /ENOENT/, 'nothing was created in it');
    },
  );

  test('a directory writable by its group or by everyone is refused (0777 was accepted), with chmod 700 as the fix', async () => {
    const dir = newDir();
    chmodSync(dir, 0o777);
    assert.match(
      refusal(dir),
      new RegExp(
        `^OBV_DATA_DIR ${dir} is writable by its group and every user \\(mode 0777\\).*: chmod 700 ${dir}\\.$`,
      ),
    );
    chmodSync(dir, 0o770);
    assert.match(refusal(dir), /is writable by its group \(mode 0770\)/);
    chmodSync(dir, 0o755);
    await opens(dir);
  });

  test("a database planted as a symbolic link is refused, and the link's target is left as it was", () => {
    const dir = newDir();
    const target = join(newDir(), 'someone-elses-file');
    writeFileSync(target, 'not yours');
    chmodSync(target, 0o644);
    symlinkSync(target, join(dir, DATABASE_FILE));
    assert.match(
      refusal(dir),
      new RegExp(
        `^OBV_DATA_DIR ${dir}: ${DATABASE_FILE.replace('.', '\\.')} is a symbolic link \\(to ${target}\\); the proxy never follows links`,
      ),
    );
    assert.equal(statSync(target).mode & 0o777, 0o644, "the target's mode is untouched");
    assert.equal(readFileSync(target, 'utf8'), 'not yours');
  });

  test('so are a planted lock file and WAL, and a dangling link', () => {
    for (const name of [LOCK_FILE, `${DATABASE_FILE}-wal`]) {
      const dir = newDir();
      symlinkSync(join(newDir(), 'nowhere'), join(dir, name));
      assert.match(refusal(dir), new RegExp(`: ${name.replace('.', '\\.')} is a symbolic link`), name);
    }
  });

  test(
    'a database of another user is refused; one of ours gets mode 0600, even from 0000',
    { skip: uid !== 0 && 'needs root to give a file to another user' },
    async () => {
      const dir = newDir();
      await opens(dir);
      const file = join(dir, DATABASE_FILE);
      chownSync(file, OTHER_UID, OTHER_UID);
      assert.match(
        refusal(dir),
        new RegExp(
          `: ${DATABASE_FILE.replace('.', '\\.')} belongs to uid ${OTHER_UID}, not to the proxy's user \\(uid 0\\): chown 0 ${file}\\.$`,
        ),
      );
      chownSync(file, uid, uid);
      for (const mode of [0o644, 0o000]) {
        chmodSync(file, mode);
        await opens(dir);
        assert.equal(statSync(file).mode & 0o777, 0o600);
      }
    },
  );

  test('a directory where the database should be, and a path through a file, are named as such', () => {
    const dir = newDir();
    mkdirSync(join(dir, DATABASE_FILE));
    assert.match(
      refusal(dir),
      new RegExp(
        `: ${DATABASE_FILE.replace('.', '\\.')} is not a regular file: move it away, or restore the database from a backup\\.$`,
      ),
    );
    const file = join(newDir(), 'a-file');
    writeFileSync(file, '');
    assert.match(
      refusal(join(file, 'data')),
      new RegExp(`^OBV_DATA_DIR ${file}/data cannot be created: ${file} is a file, not a directory`),
    );
  });

  test('a damaged database is refused with the way to restore it, not a raw SqliteError', () => {
    const garbage = newDir();
    writeFileSync(join(garbage, DATABASE_FILE), Buffer.alloc(8192, 7));
    assert.match(
      refusal(garbage),
      new RegExp(
        `^OBV_DATA_DIR ${garbage}: ${DATABASE_FILE.replace('.', '\\.')} is damaged \\(file is not a database\\)\\. ` +
          'Stop here and restore the last backup: .*"Backup and restore"',
      ),
    );
    // A real database whose schema page was overwritten.
    const malformed = newDir();
    const db = new DatabaseSync(join(malformed, DATABASE_FILE));
    db.exec('CREATE TABLE a (x); CREATE TABLE b (y); INSERT INTO a VALUES (1)');
    db.close();
    const fd = openSync(join(malformed, DATABASE_FILE), 'r+');
    writeSync(fd, Buffer.alloc(3_000, 9), 0, 3_000, 100);
    closeSync(fd);
    assert.match(
      refusal(malformed),
      /is damaged \(database disk image is malformed\)\. Stop here and restore the last backup/,
    );
  });

  test('a database written by a newer release says which version to run', () => {
    const dir = newDir();
    const db = new DatabaseSync(join(dir, DATABASE_FILE));
    db.exec('PRAGMA user_version = 99');
    db.close();
    assert.match(
      refusal(dir),
      /was written by a newer obv-link \(schema 99; this version knows \d+\): run that version, or restore a backup taken by this one\.$/,
    );
  });
});

describe('the data directory on a volume that cannot take it', { skip: smallVolumeSkipReason() }, () => {
  test('a read-only volume is named as such (the old words said "needs a writable directory" of any failure)', () => {
    const volume = mountSmallVolume(64 * 1024, { readOnly: true });
    try {
      assert.match(
        refusal(join(volume.dir, 'data')),
        new RegExp(`^OBV_DATA_DIR ${volume.dir}/data is on a read-only filesystem: mount a writable volume there`),
      );
    } finally {
      volume.close();
    }
  });

  test('a full volume: the boot names the directory, the free bytes and what to do; once space is back it opens', async () => {
    const volume = mountSmallVolume(512 * 1024);
    try {
      const dataDir = join(volume.dir, 'data');
      volume.fill();
      assert.match(
        refusal(dataDir),
        new RegExp(
          `^OBV_DATA_DIR ${dataDir}: the disk is full \\(\\d+ bytes free on its volume\\)\\. Free space on that volume ` +
            '\\(or move the directory to a larger one\\), then start the proxy again',
        ),
      );
      volume.free();
      await opens(dataDir);
    } finally {
      volume.close();
    }
  });
});
