import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';

/**
 * A private tmpfs of `sizeMb` mounted on a new temp dir, unmounted when the test ends: disk-full faults
 * are reproduced on it, never on the machine's own disk. Needs root (CI runs as root); a test that
 * cannot mount fails rather than skips.
 */
export function privateTmpfs(t: TestContext, sizeMb: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (e) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `cannot mount a private tmpfs for the disk-full test (needs root): ${(e as { stderr?: Buffer }).stderr?.toString().trim() ?? e}`,
    );
  }
  t.after(() => {
    // Lazy: a file a closing server still holds must not make the unmount fail.
    execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

/** Fills the file system under `dir` until about `leaveBytes` stay free (a file named `filler`). */
export function fillDisk(dir: string, leaveBytes: number): string {
  const file = join(dir, 'filler');
  const { bavail, bsize } = statfsSync(dir);
  const size = Math.max(0, bavail * bsize - leaveBytes);
  execFileSync('fallocate', ['-l', String(size), file]);
  return file;
}
