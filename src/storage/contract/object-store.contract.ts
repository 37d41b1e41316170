import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ManualClock } from '../../lib/clock.ts';
import type { ObjectStore } from '../../modules/exports/object-store.ts';

export interface ObjectStoreHarness {
  store: ObjectStore;
  /**
   * What the backend left behind that is not an object: temp or partial files, uploaded bytes no key
   * names (empty when none). Asked only of stores whose puts failed, so bytes kept for issued URLs
   * never count.
   */
  leftovers(): Promise<string[]>;
  close(): Promise<void>;
}

export type MakeObjectStore = (opts: { clock: ManualClock }) => Promise<ObjectStoreHarness>;

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const bytesOf = async (r: Readable | undefined): Promise<Buffer> => {
  assert.ok(r, 'object exists');
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
};
const DAY_S = 86_400;

/** Behaviour every ObjectStore backend must have. */
export function objectStoreContract(backend: string, make: MakeObjectStore): void {
  describe(`ObjectStore contract: ${backend}`, () => {
    const withStore = async (fn: (h: ObjectStoreHarness, clock: ManualClock) => Promise<void>) => {
      const clock = new ManualClock();
      const h = await make({ clock });
      try {
        await fn(h, clock);
      } finally {
        await h.close();
      }
    };

    it('should store bytes and a file path, and read back bytes, size and metadata', async () => {
      await withStore(async ({ store }) => {
        const a = Buffer.from('hello parquet');
        const info = await store.putBytes('anonymizers/latest/05_anonymizers.parquet', a, { sha256: sha(a), rows: 3 });
        assert.deepEqual({ size: info.size, sha256: info.sha256, rows: info.rows }, { size: a.length, sha256: sha(a), rows: 3 });
        assert.deepEqual(await bytesOf(await store.get('anonymizers/latest/05_anonymizers.parquet')), a);
        const head = await store.head('anonymizers/latest/05_anonymizers.parquet');
        assert.equal(head?.size, a.length);
        assert.equal(head?.sha256, sha(a));
        assert.equal(head?.rows, 3);

        const dir = mkdtempSync(join(tmpdir(), 'umbra-os-src-'));
        try {
          const big = Buffer.alloc(3 << 20, 7);
          writeFileSync(join(dir, 'f.parquet'), big);
          await store.putFile('anonymizers/2026/11/21/anonymizers.parquet', join(dir, 'f.parquet'), { sha256: sha(big), rows: 9 });
          assert.equal(sha(await bytesOf(await store.get('anonymizers/2026/11/21/anonymizers.parquet'))), sha(big));
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    });

    it('should replace an object whole, delete it, and answer undefined for a missing one', async () => {
      await withStore(async ({ store }) => {
        const k = 'proxies/latest/00_proxies.parquet';
        const one = Buffer.from('one');
        const two = Buffer.from('second version');
        await store.putBytes(k, one, { sha256: sha(one), rows: 1 });
        await store.putBytes(k, two, { sha256: sha(two), rows: 2 });
        assert.deepEqual(await bytesOf(await store.get(k)), two);
        assert.equal((await store.head(k))?.rows, 2);
        await store.delete(k);
        await store.delete(k);
        assert.equal(await store.head(k), undefined);
        assert.equal(await store.get(k), undefined);
      });
    });

    it('should, when it offers copyToFile, copy an object to a local file that a later put leaves alone', async (t) => {
      await withStore(async ({ store }) => {
        if (!store.copyToFile) return t.skip('no local copies: readers stream get()');
        const dir = mkdtempSync(join(tmpdir(), 'umbra-os-copy-'));
        try {
          const k = 'honeypot_adb/latest/07_honeypot_adb.parquet';
          const one = Buffer.from('first bytes');
          await store.putBytes(k, one, { sha256: sha(one), rows: 1 });
          assert.equal(await store.copyToFile(k, join(dir, 'a')), true);
          const two = Buffer.from('replaced');
          await store.putBytes(k, two, { sha256: sha(two), rows: 2 });
          assert.deepEqual(readFileSync(join(dir, 'a')), one, 'the copy keeps the bytes it was made from');
          await store.delete(k);
          assert.deepEqual(readFileSync(join(dir, 'a')), one);
          assert.equal(await store.copyToFile(k, join(dir, 'b')), false, 'no object');
          assert.equal(await store.copyToFile('../x', join(dir, 'c')), false, 'no such key');
          assert.deepEqual(readdirSync(dir), ['a']);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    });

    it('should list keys under a prefix, sorted', async () => {
      await withStore(async ({ store }) => {
        const b = Buffer.from('x');
        const meta = { sha256: sha(b), rows: 1 };
        for (const k of [
          'ja4t/latest/01_ja4t.parquet',
          'ja4t/latest/00_ja4t.parquet',
          'ja4t/2026/11/20/ja4t.parquet',
          'torrents/latest/00_torrents.parquet',
        ])
          await store.putBytes(k, b, meta);
        assert.deepEqual(await store.list('ja4t/latest/'), ['ja4t/latest/00_ja4t.parquet', 'ja4t/latest/01_ja4t.parquet']);
        assert.deepEqual(await store.list('ja4t/'), [
          'ja4t/2026/11/20/ja4t.parquet',
          'ja4t/latest/00_ja4t.parquet',
          'ja4t/latest/01_ja4t.parquet',
        ]);
        assert.deepEqual(await store.list('honeypot_dns/'), []);
        assert.equal(await store.head('ja4t/latest'), undefined, 'a prefix is not an object');
        assert.equal(await store.get('ja4t/latest'), undefined);
      });
    });

    it('should refuse keys with traversal, absolute paths or odd characters', async () => {
      await withStore(async ({ store }) => {
        const b = Buffer.from('x');
        for (const k of [
          '../etc/passwd',
          '/abs/key.parquet',
          'proxies/../../x',
          'proxies/./x',
          'proxies',
          'Proxies/x',
          'proxies/a b',
          'proxies//x',
          'proxies/x/',
          'proxies\\x',
        ]) {
          await assert.rejects(store.putBytes(k, b, { sha256: sha(b), rows: 1 }), /invalid object key/, k);
          assert.equal(await store.head(k), undefined);
        }
      });
    });

    it('should leave nothing visible when a put fails (checksum mismatch of bytes or of a file, missing source)', async ({ name }) => {
      await withStore(async (h) => {
        const k = 'proxies/latest/03_proxies.parquet';
        const b = Buffer.from('bytes');
        const dir = mkdtempSync(join(tmpdir(), 'umbra-os-bad-'));
        try {
          writeFileSync(join(dir, 'f.parquet'), b);
          await assert.rejects(h.store.putBytes(k, b, { sha256: '0'.repeat(64), rows: 1 }), /checksum/, name);
          await assert.rejects(h.store.putFile(k, join(dir, 'f.parquet'), { sha256: sha(Buffer.from('other')), rows: 1 }), /checksum/);
          await assert.rejects(h.store.putFile(k, '/nonexistent/file.parquet', { sha256: sha(b), rows: 1 }));
          assert.equal(await h.store.head(k), undefined);
          assert.deepEqual(await h.store.list('proxies/'), []);
          assert.deepEqual(await h.leftovers(), []);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      });
    });

    it('should leave the previous object as it was when a put replacing it fails', async () => {
      await withStore(async ({ store }) => {
        const k = 'proxies/latest/04_proxies.parquet';
        const one = Buffer.from('the listed bytes');
        await store.putBytes(k, one, { sha256: sha(one), rows: 2 });
        const two = Buffer.from('a rerun whose checksum is wrong');
        await assert.rejects(store.putBytes(k, two, { sha256: sha(one), rows: 3 }), /checksum/);
        await assert.rejects(store.putFile(k, '/nonexistent/file.parquet', { sha256: sha(two), rows: 3 }));
        assert.deepEqual(await store.head(k), { key: k, size: one.length, sha256: sha(one), rows: 2 });
        assert.deepEqual(await bytesOf(await store.get(k)), one);
      });
    });

    it('should read an object as one version: metadata of exactly the bytes streamed, even when a put replaces it meanwhile', async () => {
      await withStore(async ({ store }) => {
        const k = 'torrents/latest/09_torrents.parquet';
        assert.equal(await store.read(k), undefined, 'no object');
        assert.equal(await store.read('torrents/latest'), undefined, 'a prefix is not an object');
        const one = Buffer.from('first version of the hour');
        await store.putBytes(k, one, { sha256: sha(one), rows: 4, contentType: 'application/vnd.apache.parquet' });
        const first = await store.read(k);
        assert.deepEqual(first?.info, {
          key: k,
          size: one.length,
          sha256: sha(one),
          rows: 4,
          contentType: 'application/vnd.apache.parquet',
        });
        // Replaced (and then deleted) before a byte of the first read was consumed.
        const two = Buffer.from('the next day, other bytes of another length');
        await store.putBytes(k, two, { sha256: sha(two), rows: 9 });
        const second = await store.read(k);
        await store.delete(k);
        assert.deepEqual(await bytesOf(first!.body), one, 'the first read streams the bytes its metadata describes');
        assert.equal(second?.info.sha256, sha(two));
        assert.equal(second?.info.rows, 9);
        assert.deepEqual(await bytesOf(second!.body), two);
        assert.equal(await store.read(k), undefined);
      });
    });

    describe('download URLs of the store itself (presignGet), when it offers them', () => {
      const key = 'anonymizers/latest/05_anonymizers.parquet';
      const fetchBytes = async (url: string) => {
        const res = await fetch(url);
        return { status: res.status, bytes: Buffer.from(await res.arrayBuffer()) };
      };

      it('should give an absolute URL that needs no credentials and serves exactly the bytes it names', async (t) => {
        await withStore(async ({ store }) => {
          if (!store.presignGet) return t.skip('no URLs of its own: downloads go through umbra (DownloadSigner)');
          const one = Buffer.from('PAR1 the bytes of hour 05 PAR1');
          await store.putBytes(key, one, { sha256: sha(one), rows: 5, contentType: 'application/vnd.apache.parquet' });
          const url = await store.presignGet({ key, sha256: sha(one) }, DAY_S);
          assert.match(url, /^https?:\/\//);
          const got = await fetchBytes(url);
          assert.equal(got.status, 200);
          assert.equal(sha(got.bytes), sha(one));
          // Bytes the key never held: the URL serves nothing.
          const never = await fetchBytes(await store.presignGet({ key, sha256: sha(Buffer.from('never stored')) }, DAY_S));
          assert.notEqual(never.status, 200);
          assert.equal(never.bytes.includes(Buffer.from('PAR1')), false);
          await assert.rejects(store.presignGet({ key, sha256: 'not-a-checksum' }, DAY_S));
          await assert.rejects(store.presignGet({ key: '../x', sha256: sha(one) }, DAY_S), /invalid object key/);
        });
      });

      it('should never serve other bytes from a URL once its key is replaced or deleted: the bytes it was issued for, or nothing', async (t) => {
        await withStore(async ({ store }) => {
          if (!store.presignGet) return t.skip('no URLs of its own');
          const yesterday = Buffer.from('PAR1 yesterday at 05 PAR1');
          const today = Buffer.from('PAR1 today at 05, other bytes PAR1');
          await store.putBytes(key, yesterday, { sha256: sha(yesterday), rows: 1 });
          const old = await store.presignGet({ key, sha256: sha(yesterday) }, DAY_S);
          await store.putBytes(key, today, { sha256: sha(today), rows: 2 });
          const fresh = await store.presignGet({ key, sha256: sha(today) }, DAY_S);
          const served = await fetchBytes(old);
          if (served.status === 200) assert.equal(sha(served.bytes), sha(yesterday), 'the old URL serves the old bytes');
          assert.notEqual(sha(served.bytes), sha(today), 'never the new bytes');
          const now = await fetchBytes(fresh);
          assert.equal(now.status, 200);
          assert.equal(sha(now.bytes), sha(today));
          await store.delete(key);
          for (const [url, bytes] of [
            [old, yesterday],
            [fresh, today],
          ] as const) {
            const after = await fetchBytes(url);
            if (after.status === 200) assert.equal(sha(after.bytes), sha(bytes), 'after a delete: the bytes the URL named, or nothing');
            else assert.equal(after.bytes.includes(Buffer.from('PAR1')), false);
          }
        });
      });
    });
  });
}

/** Files in a directory tree (relative paths), for backends that keep temp files on disk. */
export function filesUnder(dir: string): string[] {
  try {
    return readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((d) => !d.isDirectory())
      .map((d) => join(d.parentPath, d.name).slice(dir.length + 1));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}
