import { readFile } from 'node:fs/promises';
import { parquetMetadata, parquetReadObjects, parquetSchema, type SchemaElement, type SchemaTree } from 'hyparquet';
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
  const fields = parquetSchema(meta).children.map((c) => ({ name: c.element.name, type: catalogTypeOf(c) }));
  return { rows, numRows: Number(meta.num_rows), kv, fields };
}

/**
 * Maps a parquet schema node back to the catalog's DuckDB type name: groups annotated LIST (three
 * levels: the repeated `list`, its `element`) and MAP (repeated `key_value`: `key`, `value`), other
 * groups as STRUCTs, leaves by physical and logical type.
 */
function catalogTypeOf(node: SchemaTree): ColumnType | string {
  const el = node.element;
  const annotation = el.logical_type?.type ?? el.converted_type;
  if (annotation === 'LIST') return `${catalogTypeOf(node.children[0]!.children[0]!)}[]`;
  if (annotation === 'MAP') {
    const [key, value] = node.children[0]!.children;
    return `MAP(${catalogTypeOf(key!)}, ${catalogTypeOf(value!)})`;
  }
  if (node.children.length > 0) return `STRUCT(${node.children.map((c) => `${c.element.name} ${catalogTypeOf(c)}`).join(', ')})`;
  return leafTypeOf(el);
}

function leafTypeOf(el: SchemaElement): ColumnType | string {
  const lt = el.logical_type;
  if (el.type === 'INT64' && lt?.type === 'TIMESTAMP') return lt.isAdjustedToUTC ? 'TIMESTAMP WITH TIME ZONE' : 'TIMESTAMP';
  if (el.type === 'INT64') return el.converted_type === 'UINT_64' || (lt?.type === 'INTEGER' && !lt.isSigned) ? 'UBIGINT' : 'BIGINT';
  if (el.type === 'INT32') return 'INTEGER';
  if (el.type === 'BOOLEAN') return 'BOOLEAN';
  if (el.type === 'BYTE_ARRAY') {
    if (lt?.type === 'JSON' || el.converted_type === 'JSON') return 'JSON';
    if (lt?.type === 'STRING' || el.converted_type === 'UTF8') return 'VARCHAR';
    return 'BLOB';
  }
  return `${el.type}/${lt?.type ?? el.converted_type ?? ''}`;
}
