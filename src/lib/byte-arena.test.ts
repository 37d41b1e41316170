import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ByteArena } from './byte-arena.ts';

describe('ByteArena', () => {
  it('should give back every text as its UTF-8 bytes, copied where asked, with its length', () => {
    const arena = new ByteArena();
    const texts = ['{"city":"São Paulo"}', '', '{"isp":"株式会社"}', 'x'.repeat(1000), '{"a":"😀"}'];
    const handles = texts.map((t) => arena.add(t));
    assert.ok(handles.every((h) => h > 0));
    assert.equal(new Set(handles).size, texts.length);
    const out = Buffer.alloc(4000, 0x2e);
    let at = 1;
    texts.forEach((t, i) => {
      const bytes = Buffer.from(t, 'utf8');
      assert.equal(arena.length(handles[i]!), bytes.length);
      assert.equal(arena.text(handles[i]!), t);
      const n = arena.copy(handles[i]!, out, at);
      assert.equal(n, bytes.length);
      assert.ok(out.subarray(at, at + n).equals(bytes), t);
      at += n;
    });
    // Nothing written outside the copies.
    assert.equal(out[0], 0x2e);
    assert.equal(out[at], 0x2e);
    assert.equal(
      arena.size.texts,
      texts.reduce((n, t) => n + Buffer.byteLength(t), 0),
    );
  });

  it('should start a new chunk for a text that does not fit the rest of one, and never split a text', () => {
    const arena = new ByteArena();
    const big = 'a'.repeat(60_000);
    const handles: number[] = [];
    // 70 texts of 60,002 bytes (with their lengths) pass one 4 MiB chunk.
    for (let i = 0; i < 70; i++) handles.push(arena.add(`${big}${String(i).padStart(2, '0')}`.slice(0, 60_000)));
    assert.equal(arena.size.reserved, 2 * ByteArena.CHUNK);
    const chunkOf = (h: number) => Math.floor((h - 1) / ByteArena.CHUNK);
    assert.equal(chunkOf(handles[0]!), 0);
    assert.equal(chunkOf(handles[69]!), 1);
    for (const h of handles) {
      const start = (h - 1) % ByteArena.CHUNK;
      assert.ok(start + 2 + arena.length(h) <= ByteArena.CHUNK, 'inside its chunk');
      assert.equal(arena.text(h).length, 60_000);
    }
  });

  it('should refuse a text whose length two bytes cannot say, and store nothing for it', () => {
    const arena = new ByteArena();
    assert.equal(arena.add('b'.repeat(65_535)) > 0, true);
    assert.equal(arena.add('b'.repeat(65_536)), 0);
    assert.equal(arena.add('é'.repeat(40_000)), 0, '80,000 bytes of UTF-8');
    assert.equal(arena.size.texts, 65_535);
  });
});
