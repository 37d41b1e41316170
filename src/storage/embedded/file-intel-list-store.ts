import { createHash } from 'node:crypto';
import {
  mkdirSync,
  openSync,
  fsyncSync,
  closeSync,
  writeFileSync,
  renameSync,
  readdirSync,
  readFileSync,
  rmSync,
  existsSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import type { IntelList, IntelListStore } from '../../modules/intel/lists/intel-list.ts';

const TAG = /^[A-Z0-9_]{1,64}$/;

/**
 * One JSON file per list under `{dir}/{KIND}--{PROVIDER}.json`, written to a temp file, fsynced and
 * renamed, so a reader (the server) never sees half a list. Kind and provider are checked against
 * TAG before they become part of a file name.
 */
export class FileIntelListStore implements IntelListStore {
  constructor(private readonly dir: string) {}

  private file(kind: string, provider: string): string {
    if (!TAG.test(kind) || !TAG.test(provider)) throw new Error(`invalid list kind or provider: ${kind}/${provider}`);
    return join(this.dir, `${kind}--${provider}.json`);
  }

  async put(list: IntelList): Promise<void> {
    const target = this.file(list.kind, list.provider);
    mkdirSync(this.dir, { recursive: true });
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(list));
    const fd = openSync(tmp, 'r');
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, target);
  }

  async remove(kind: string, provider: string): Promise<boolean> {
    const target = this.file(kind, provider);
    if (!existsSync(target)) return false;
    rmSync(target);
    return true;
  }

  private names(): string[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((n) => n.endsWith('.json'))
      .sort();
  }

  async all(): Promise<IntelList[]> {
    return this.names().map((n) => {
      const l = JSON.parse(readFileSync(join(this.dir, n), 'utf8')) as IntelList;
      // Lists stored before publication times were kept have no other time than their import.
      l.published_at ??= l.imported_at;
      l.published_from ??= 'import';
      return l;
    });
  }

  async revision(): Promise<string> {
    const h = createHash('sha256');
    for (const n of this.names()) {
      // Every put renames a new file into place, so name, inode, size and mtime change with it.
      const s = statSync(join(this.dir, n));
      h.update(`${n}\0${s.ino}\0${s.size}\0${s.mtimeMs}\0`);
    }
    return h.digest('hex').slice(0, 16);
  }
}
