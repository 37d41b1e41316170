import { readFile } from 'node:fs/promises';
import { parquetMetadata, parquetReadObjects, type SchemaElement } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';
import type { ColumnType } from '../../src/modules/feeds/feed-catalog.ts';

/** Test helper: reads a parquet file with hyparquet, an independent second reader (not DuckDB). */
export async function readParquet(file: string | Uint8Array): Promise<{
  rows: Record<string, unknown>[];
  numRows: number;
  kv: Record<string, string>;
  fields: { name: string; type: ColumnType | string }[];
}> {
  const bytes = typeof file === 'string' ? await readFile(file) : file;
  const ab = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const meta = parquetMetadata(ab);
  const rows = (await parquetReadObjects({ file: ab, compressors, utf8: false })) as Record<string, unknown>[];
  const kv = Object.fromEntries((meta.key_value_metadata ?? []).map((e) => [e.key, e.value ?? '']));
  const fields = meta.schema.slice(1).map((el) => ({ name: el.name, type: catalogTypeOf(el) }));
  return { rows, numRows: Number(meta.num_rows), kv, fields };
}

/** Maps a parquet schema element back to the catalog's DuckDB type name. */
function catalogTypeOf(el: SchemaElement): ColumnType | string {
  const lt = el.logical_type;
  if (el.type === 'INT64') return el.converted_type === 'UINT_64' || (lt?.type === 'INTEGER' && !lt.isSigned) ? 'UBIGINT' : 'BIGINT';
  if (el.type === 'INT32') return 'INTEGER';
  if (el.type === 'BYTE_ARRAY') {
    if (lt?.type === 'JSON' || el.converted_type === 'JSON') return 'JSON';
    if (lt?.type === 'STRING' || el.converted_type === 'UTF8') return 'VARCHAR';
    return 'BLOB';
  }
  return `${el.type}/${lt?.type ?? el.converted_type ?? ''}`;
}
