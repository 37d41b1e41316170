import assert from 'node:assert/strict';
/** Test helper: a DuckDB type name (as the catalog or `DESCRIBE` spells it) as a tree, and values read back by it. */
export type DuckType =
  | { kind: 'scalar'; name: string }
  | { kind: 'list'; of: DuckType }
  | { kind: 'struct'; members: [string, DuckType][] }
  | { kind: 'map'; key: DuckType; value: DuckType };

/** Splits `a, b(c, d), e` at the commas outside brackets and quotes. */
function splitTop(s: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === '"') quoted = !quoted;
    else if (quoted) continue;
    else if (c === '(') depth++;
    else if (c === ')') depth--;
    else if (c === ',' && depth === 0) {
      parts.push(s.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(s.slice(start).trim());
  return parts;
}

export function parseDuckType(text: string): DuckType {
  const t = text.trim();
  if (t.endsWith('[]')) return { kind: 'list', of: parseDuckType(t.slice(0, -2)) };
  const inner = (prefix: string) => t.slice(prefix.length, -1);
  if (t.startsWith('STRUCT(') && t.endsWith(')'))
    return {
      kind: 'struct',
      members: splitTop(inner('STRUCT(')).map((m) => {
        const name = m.startsWith('"') ? m.slice(1, m.indexOf('"', 1)) : m.slice(0, m.indexOf(' '));
        return [name, parseDuckType(m.slice(m.startsWith('"') ? name.length + 2 : name.length))];
      }),
    };
  if (t.startsWith('MAP(') && t.endsWith(')')) {
    const [key, value] = splitTop(inner('MAP('));
    return { kind: 'map', key: parseDuckType(key!), value: parseDuckType(value!) };
  }
  return { kind: 'scalar', name: t };
}

/** A value DuckDB read (node-api JS form) back as the stream record's JSON value, led by its DuckDB type. */
export function asMember(v: unknown, t: DuckType, unit: 's' | 'ms'): unknown {
  if (v === null || v === undefined) return undefined;
  switch (t.kind) {
    case 'list':
      return (v as unknown[]).map((e) => asMember(e, t.of, unit));
    case 'map':
      return Object.fromEntries((v as { key: unknown; value: unknown }[]).map((e) => [e.key, asMember(e.value, t.value, unit)]));
    case 'struct':
      return dropAbsent(Object.fromEntries(t.members.map(([m, mt]) => [m, asMember((v as Record<string, unknown>)[m], mt, unit)])));
    case 'scalar':
      switch (t.name) {
        case 'BIGINT':
        case 'UBIGINT':
          assert.ok(typeof v === 'bigint' && Number.isSafeInteger(Number(v)), `${t.name} read as a bigint`);
          return Number(v);
        case 'BLOB':
          return Buffer.from(v as Uint8Array).toString('base64');
        case 'JSON':
          return JSON.parse(v as string);
        case 'TIMESTAMP WITH TIME ZONE':
          assert.ok(v instanceof Date);
          return unit === 'ms' ? v.getTime() : v.getTime() / 1000;
        default:
          return v;
      }
  }
}

/** A record without its null and absent members: what a row of NULLs for them reads back as. */
export const dropAbsent = (o: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined && v !== null));
