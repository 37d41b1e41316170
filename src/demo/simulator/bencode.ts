/** BitTorrent's bencoding (BEP 3), enough to build info dictionaries and hash them. */
export type Bencodable = number | string | Uint8Array | readonly Bencodable[] | { readonly [key: string]: Bencodable };

export function bencode(value: Bencodable): Buffer {
  const parts: Buffer[] = [];
  write(value, parts);
  return Buffer.concat(parts);
}

function write(value: Bencodable, out: Buffer[]): void {
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) throw new Error(`bencode: ${value} is not an integer`);
    out.push(Buffer.from(`i${value}e`));
  } else if (typeof value === 'string' || value instanceof Uint8Array) {
    // Lengths count bytes, not characters: release names may hold non-ASCII letters.
    const bytes = typeof value === 'string' ? Buffer.from(value, 'utf8') : Buffer.from(value);
    out.push(Buffer.from(`${bytes.length}:`), bytes);
  } else if (Array.isArray(value)) {
    out.push(Buffer.from('l'));
    for (const v of value) write(v, out);
    out.push(Buffer.from('e'));
  } else {
    // Keys are sorted as raw byte strings, which clients rely on to recompute the same info hash.
    const dict = value as { readonly [key: string]: Bencodable };
    const keys = Object.keys(dict).sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
    out.push(Buffer.from('d'));
    for (const k of keys) {
      write(k, out);
      write(dict[k]!, out);
    }
    out.push(Buffer.from('e'));
  }
}
