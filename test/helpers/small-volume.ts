// A real, small filesystem for the tests of a full disk: a tmpfs of a few hundred kilobytes or megabytes
// mounted on a temporary directory, which a test fills with a filler file (ENOSPC for everything else on
// it) and frees again. Mounting needs root (or CAP_SYS_ADMIN): where it is refused, the suites that need
// one are skipped with a loud message, and with CI=true they fail instead, so CI cannot pass without
// having run them (as the Redis suites do without redis-server: test/helpers/redis-server.ts).
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, statfsSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function mount(dir: string, options: string): string | undefined {
  const result = spawnSync('mount', ['-t', 'tmpfs', '-o', options, 'tmpfs', dir], { encoding: 'utf8' });
  return result.status === 0
    ? undefined
    : (result.stderr || result.error?.message || `mount exited ${result.status}`).trim();
}

function unmount(dir: string): void {
  // Lazy: a process killed a moment ago may still be closing its files there.
  spawnSync('umount', ['-l', dir]);
}

let probed: string | false | undefined;

/**
 * `false` when a tmpfs can be mounted here, else the reason to skip (pass it as `describe`'s `skip`).
 * @throws Error with CI=true when it cannot: CI must run these suites.
 */
export function smallVolumeSkipReason(): string | false {
  if (probed === undefined) {
    const dir = mkdtempSync(join(tmpdir(), 'obv-volume-probe-'));
    const refused = mount(dir, 'size=64k,mode=0700');
    if (refused === undefined) unmount(dir);
    rmSync(dir, { recursive: true, force: true });
    probed =
      refused === undefined ? false : `cannot mount a tmpfs (${refused}); run as root (sudo) or with CAP_SYS_ADMIN`;
  }
  if (probed === false) return false;
  if (process.env.CI === 'true') throw new Error(`${probed} — required when CI=true`);
  console.error(`\n${'!'.repeat(78)}\n!!! SKIPPING the full-disk tests: ${probed}\n${'!'.repeat(78)}\n`);
  return `SKIPPED: ${probed}`;
}

export interface SmallVolume {
  /** The mount point (empty at first, mode 0700). */
  readonly dir: string;
  /** Bytes this user may still write there. */
  freeBytes(): number;
  /** Fills the volume (a filler file) until at most `leaveBytes` are left. */
  fill(leaveBytes?: number): void;
  /** Deletes the filler: the space it held is free again. */
  free(): void;
  /** Unmounts the volume and removes the mount point. */
  close(): void;
}

/** Mounts a tmpfs of `bytes` (rounded up to pages) on a new temporary directory. */
export function mountSmallVolume(bytes: number, options: { readOnly?: boolean } = {}): SmallVolume {
  const dir = mkdtempSync(join(tmpdir(), 'obv-volume-'));
  const refused = mount(dir, `size=${bytes},mode=0700${options.readOnly ? ',ro' : ''}`);
  if (refused !== undefined) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`mount tmpfs on ${dir}: ${refused}`);
  }
  const filler = join(dir, 'filler');
  const freeBytes = () => {
    const volume = statfsSync(dir);
    return volume.bavail * volume.bsize;
  };
  return {
    dir,
    freeBytes,
    fill(leaveBytes = 0) {
      const fd = openSync(filler, 'a');
      const chunk = Buffer.alloc(4096);
      try {
        // Bounded: a tmpfs of this size holds at most this many chunks.
        for (let written = 0; written <= bytes && freeBytes() > leaveBytes; written += chunk.length) {
          try {
            writeSync(fd, chunk);
          } catch (error) {
            if ((error as NodeJS.ErrnoException).code === 'ENOSPC') break;
            throw error;
          }
        }
      } finally {
        closeSync(fd);
      }
    },
    free() {
      try {
        unlinkSync(filler);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
      }
    },
    close() {
      unmount(dir);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
