import { createReadStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import type { Reader } from 'mmdb-lib';

/** Splits one CSV line (RFC 4180 quoting) into fields. */
export function splitCsv(line: string): string[] {
  const out: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let v = '';
      i++;
      for (;;) {
        const q = line.indexOf('"', i);
        if (q < 0) {
          v += line.slice(i);
          i = line.length;
          break;
        }
        v += line.slice(i, q);
        if (line[q + 1] === '"') {
          v += '"';
          i = q + 2;
        } else {
          i = q + 1;
          break;
        }
      }
      out.push(v);
      i++; // the comma
    } else {
      const c = line.indexOf(',', i);
      const end = c < 0 ? line.length : c;
      out.push(line.slice(i, end));
      i = end + 1;
    }
  }
  return out;
}

/** Streams `start,end,asn,org` rows; progress in bytes read. */
export async function readAsnCsv(
  file: string,
  row: (start: string, end: string, asn: number, org: string) => void,
  progress: (done: number, total: number) => void,
): Promise<void> {
  const total = statSync(file).size;
  const stream = createReadStream(file, { highWaterMark: 1 << 20 });
  let n = 0;
  for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
    if (line === '') continue;
    const [start, end, asn, org] = splitCsv(line);
    if (start === undefined || end === undefined || asn === undefined) continue;
    row(start, end, Number(asn), org ?? '');
    if (++n % 20000 === 0) progress(stream.bytesRead, total);
  }
  progress(total, total);
}

/**
 * Visits every network of an MMDB file in ascending address order by walking its search tree
 * (much faster than one lookup per network). `prefix` holds the network's first address as 4 words
 * (IPv4 trees use only word 3); `bits` is the prefix length; `pointer` identifies the data record.
 */
export function walkMmdb(
  reader: Reader<Record<string, unknown>>,
  visit: (prefix: Uint32Array, bits: number, pointer: number) => void,
  progress: (done: number, total: number) => void,
  skip?: (prefix: Uint32Array, bits: number) => boolean,
): void {
  const { nodeCount, nodeByteSize, ipVersion } = reader.metadata;
  const walker = (reader as unknown as { walker: { left(o: number): number; right(o: number): number } }).walker;
  const width = ipVersion === 4 ? 32 : 128;
  const prefix = new Uint32Array(4);
  let seen = 0;
  const step = (node: number, depth: number): void => {
    if (node === nodeCount) return; // empty
    if (node > nodeCount) {
      visit(prefix, depth, node);
      return;
    }
    if (skip?.(prefix, depth)) return;
    if (++seen % 200000 === 0) progress(seen, nodeCount);
    const offset = node * nodeByteSize;
    const bit = 128 - width + depth; // bit index within the 128-bit prefix
    const word = bit >>> 5;
    const mask = 1 << (31 - (bit & 31));
    step(walker.left(offset), depth + 1);
    prefix[word] = (prefix[word]! | mask) >>> 0;
    step(walker.right(offset), depth + 1);
    prefix[word] = (prefix[word]! & ~mask) >>> 0;
  };
  step(0, 0);
  progress(nodeCount, nodeCount);
}

/** The data record an MMDB tree pointer leads to. */
export function mmdbRecord(reader: Reader<Record<string, unknown>>, pointer: number): Record<string, unknown> {
  return (reader as unknown as { resolveDataPointer(p: number): Record<string, unknown> }).resolveDataPointer(pointer);
}

/** Last address of a network: the prefix with every host bit set (4 words). */
export function networkEnd(prefix: Uint32Array, bits: number, width: 32 | 128, out: Uint32Array): Uint32Array {
  out.set(prefix);
  const first = 128 - width + bits;
  for (let b = first; b < 128; b++) out[b >>> 5] = (out[b >>> 5]! | (1 << (31 - (b & 31)))) >>> 0;
  return out;
}
