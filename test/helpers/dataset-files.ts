import { closeSync, fsyncSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { PREFIX_BYTES } from '../../src/modules/dataset/dataset-format.ts';

/**
 * Writes a copy of a dataset file whose header says another build time (same tables), renamed into
 * place as `umbra data build` does, so a watching server sees a new file with a new data version.
 */
export function restampDataset(src: string, dst: string, builtAt: number): void {
  const buf = readFileSync(src);
  const len = buf.readUInt32LE(8);
  const header = JSON.parse(buf.subarray(PREFIX_BYTES, PREFIX_BYTES + len).toString('utf8'));
  header.info.built_at = builtAt;
  const text = Buffer.from(JSON.stringify(header));
  if (text.length > len) throw new Error('restamped header does not fit');
  text.copy(buf, PREFIX_BYTES);
  buf.fill(0x20, PREFIX_BYTES + text.length, PREFIX_BYTES + len);
  // Synced before the rename, as the builder does, so no write-back of it runs later.
  const fd = openSync(`${dst}.tmp`, 'w');
  try {
    writeSync(fd, buf);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(`${dst}.tmp`, dst);
}
