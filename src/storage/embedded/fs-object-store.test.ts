import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ManualClock } from '../../lib/clock.ts';
import { FsObjectStore } from './fs-object-store.ts';

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const KEY = 'proxies/latest/05_proxies.parquet';

async function withStore(fn: (store: FsObjectStore, dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-fs-store-'));
  try {
    await fn(new FsObjectStore({ dataDir: dir, clock: new ManualClock() }), dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('FsObjectStore metadata of the file actually read', () => {
  it('should not trust a sidecar left by a crash between the data and sidecar renames, even at the same size', async () => {
    await withStore(async (store, dir) => {
      const one = Buffer.from('AAAAAAAAAAAAAAAA');
      const two = Buffer.from('BBBBBBBBBBBBBBBB');
      await store.putBytes(KEY, one, { sha256: sha(one), rows: 1 });
      // What a put killed after its first rename leaves: new bytes of the same length under the old sidecar.
      const tmp = join(dir, 'exports', 'next.part');
      writeFileSync(tmp, two);
      renameSync(tmp, store.pathOf(KEY));
      assert.equal((await store.head(KEY))?.sha256, sha(two));
      const read = await store.read(KEY);
      assert.equal(read?.info.sha256, sha(two));
      read?.body.destroy();
    });
  });

  it('should hash a file whose sidecar predates inodes once, then record its inode', async () => {
    await withStore(async (store, dir) => {
      const one = Buffer.from('the bytes of an old daily file');
      await store.putBytes(KEY, one, { sha256: sha(one), rows: 7 });
      const sidecar = join(dir, 'exports', '.meta', 'proxies', 'latest', '05_proxies.parquet.json');
      const { ino, ...legacy } = JSON.parse(readFileSync(sidecar, 'utf8')) as Record<string, unknown>;
      assert.ok(ino, 'put records the inode');
      writeFileSync(sidecar, JSON.stringify(legacy));
      assert.deepEqual(await store.head(KEY), { key: KEY, size: one.length, sha256: sha(one), rows: 7 });
      assert.equal(JSON.parse(readFileSync(sidecar, 'utf8')).ino, ino, 'rewritten with the inode');
      // A legacy sidecar whose checksum is wrong is not trusted, nor rewritten.
      writeFileSync(sidecar, JSON.stringify({ ...legacy, sha256: sha(Buffer.from('other')) }));
      assert.deepEqual(await store.head(KEY), { key: KEY, size: one.length, sha256: sha(one), rows: -1 });
      assert.equal(JSON.parse(readFileSync(sidecar, 'utf8')).ino, undefined);
    });
  });
});
