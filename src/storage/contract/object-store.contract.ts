import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ManualClock } from '../../lib/clock.ts';
import type { ObjectStore, SigningSecret } from '../../modules/exports/object-store.ts';

export interface ObjectStoreHarness {
  store: ObjectStore;
  /** Temp/partial files the backend left behind (empty when none); backends without any return []. */
  leftovers(): string[];
  /** Where the backend keeps objects, so a second store (after a secret rotation) opens the same place. */
  location: string;
  close(): Promise<void>;
}

export type MakeObjectStore = (opts: {
  clock: ManualClock;
  secrets: SigningSecret[];
  shareWith?: ObjectStoreHarness;
}) => Promise<ObjectStoreHarness>;

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
    const secrets = [{ id: 'k2', secret: 'current-secret' }];
    const withStore = async (fn: (h: ObjectStoreHarness, clock: ManualClock) => Promise<void>) => {
      const clock = new ManualClock();
      const h = await make({ clock, secrets });
      try {
        await fn(h, clock);
      } finally {
        await h.close();
      }
    };

    it('should store bytes and a file path, and read back bytes, size and metadata', async () => {
      await withStore(async ({ store }) => {
        const a = Buffer.from('hello parquet');
        const info = await store.put('anonymizers/latest/05_anonymizers.parquet', a, { sha256: sha(a), rows: 3 });
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
          await store.put('anonymizers/2026/11/21/anonymizers.parquet', join(dir, 'f.parquet'), { sha256: sha(big), rows: 9 });
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
        await store.put(k, one, { sha256: sha(one), rows: 1 });
        await store.put(k, two, { sha256: sha(two), rows: 2 });
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
          await store.put(k, one, { sha256: sha(one), rows: 1 });
          assert.equal(await store.copyToFile(k, join(dir, 'a')), true);
          const two = Buffer.from('replaced');
          await store.put(k, two, { sha256: sha(two), rows: 2 });
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
          await store.put(k, b, meta);
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
          await assert.rejects(store.put(k, b, { sha256: sha(b), rows: 1 }), /invalid object key/, k);
          assert.equal(await store.head(k), undefined);
        }
      });
    });

    it('should leave nothing visible when a put fails (checksum mismatch, missing source)', async ({ name }) => {
      await withStore(async (h) => {
        const b = Buffer.from('bytes');
        await assert.rejects(h.store.put('proxies/latest/03_proxies.parquet', b, { sha256: '0'.repeat(64), rows: 1 }), /checksum/, name);
        await assert.rejects(h.store.put('proxies/latest/03_proxies.parquet', '/nonexistent/file.parquet', { sha256: sha(b), rows: 1 }));
        assert.equal(await h.store.head('proxies/latest/03_proxies.parquet'), undefined);
        assert.deepEqual(await h.store.list('proxies/'), []);
        assert.deepEqual(h.leftovers(), []);
      });
    });

    it('should read an object as one version: metadata of exactly the bytes streamed, even when a put replaces it meanwhile', async () => {
      await withStore(async ({ store }) => {
        const k = 'torrents/latest/09_torrents.parquet';
        assert.equal(await store.read(k), undefined, 'no object');
        assert.equal(await store.read('torrents/latest'), undefined, 'a prefix is not an object');
        const one = Buffer.from('first version of the hour');
        await store.put(k, one, { sha256: sha(one), rows: 4, contentType: 'application/vnd.apache.parquet' });
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
        await store.put(k, two, { sha256: sha(two), rows: 9 });
        const second = await store.read(k);
        await store.delete(k);
        assert.deepEqual(await bytesOf(first!.body), one, 'the first read streams the bytes its metadata describes');
        assert.equal(second?.info.sha256, sha(two));
        assert.equal(second?.info.rows, 9);
        assert.deepEqual(await bytesOf(second!.body), two);
        assert.equal(await store.read(k), undefined);
      });
    });

    describe('presigned URLs', () => {
      const key = 'anonymizers/2026/11/21/anonymizers.parquet';
      const sha256 = sha(Buffer.from('the daily file'));
      const target = { key, sha256 };
      const queryOf = (url: string) => new URL(url, 'http://x').searchParams;

      it('should accept a fresh URL until its expiry and refuse it one second after, returning the key and checksum it signed', async () => {
        await withStore(async ({ store }, clock) => {
          const q = queryOf(await store.presign(target, DAY_S));
          assert.deepEqual(store.verify(q), { ok: true, key, sha256 });
          clock.advance(DAY_S * 1000);
          assert.deepEqual(store.verify(q), { ok: true, key, sha256 });
          clock.advance(1000);
          assert.deepEqual(store.verify(q), { ok: false, reason: 'EXPIRED' });
        });
      });

      it('should refuse a URL with any signed member tampered with or removed, and a malformed query', async () => {
        await withStore(async ({ store }) => {
          const q = queryOf(await store.presign(target, DAY_S));
          const tamper = (name: string, value: string | undefined) => {
            const t = new URLSearchParams(q);
            if (value === undefined) t.delete(name);
            else t.set(name, value);
            return store.verify(t);
          };
          assert.deepEqual(tamper('object', 'anonymizers/2026/11/22/anonymizers.parquet'), { ok: false, reason: 'BAD_SIGNATURE' });
          assert.deepEqual(tamper('sha256', sha(Buffer.from('other bytes'))), { ok: false, reason: 'BAD_SIGNATURE' });
          assert.deepEqual(tamper('expires', String(Number(q.get('expires')) + 3600)), { ok: false, reason: 'BAD_SIGNATURE' });
          const sig = q.get('sig')!;
          assert.deepEqual(tamper('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1)), { ok: false, reason: 'BAD_SIGNATURE' });
          assert.deepEqual(tamper('sig', sig.slice(1)), { ok: false, reason: 'BAD_SIGNATURE' });
          for (const name of ['object', 'sha256', 'expires', 'kid', 'sig'])
            assert.deepEqual(tamper(name, undefined), { ok: false, reason: 'MALFORMED' }, `without ${name}`);
          assert.deepEqual(tamper('sha256', sha256.toUpperCase()), { ok: false, reason: 'MALFORMED' });
          assert.deepEqual(tamper('object', '../secrets'), { ok: false, reason: 'MALFORMED' });
          assert.deepEqual(store.verify({ key }), { ok: false, reason: 'MALFORMED' });
          await assert.rejects(store.presign({ key, sha256: 'not-a-checksum' }, DAY_S));
        });
      });

      it('should refuse an unknown key id and accept URLs of the previous secret after rotation', async () => {
        const clock = new ManualClock();
        const old = await make({ clock, secrets: [{ id: 'k1', secret: 'old-secret' }] });
        const rotated = await make({
          clock,
          secrets: [
            { id: 'k2', secret: 'new-secret' },
            { id: 'k1', secret: 'old-secret' },
          ],
          shareWith: old,
        });
        const retired = await make({
          clock,
          secrets: [
            { id: 'k3', secret: 'newest' },
            { id: 'k2', secret: 'new-secret' },
          ],
          shareWith: old,
        });
        try {
          const oldUrl = queryOf(await old.store.presign(target, DAY_S));
          assert.equal(oldUrl.get('kid'), 'k1');
          assert.deepEqual(rotated.store.verify(oldUrl), { ok: true, key, sha256 }, 'previous secret still accepted');
          const newUrl = queryOf(await rotated.store.presign(target, DAY_S));
          assert.equal(newUrl.get('kid'), 'k2');
          assert.deepEqual(rotated.store.verify(newUrl), { ok: true, key, sha256 });
          assert.deepEqual(old.store.verify(newUrl), { ok: false, reason: 'UNKNOWN_KEY_ID' });
          assert.deepEqual(retired.store.verify(oldUrl), { ok: false, reason: 'UNKNOWN_KEY_ID' });
          // A known id with another secret's signature is a bad signature, not a pass.
          const forged = new URLSearchParams(newUrl);
          forged.set('kid', 'k1');
          assert.deepEqual(rotated.store.verify(forged), { ok: false, reason: 'BAD_SIGNATURE' });
        } finally {
          await retired.close();
          await rotated.close();
          await old.close();
        }
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
