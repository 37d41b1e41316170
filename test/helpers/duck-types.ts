/** Test helper: a DuckDB type name (as the catalog or `DESCRIBE` spells it) as a tree. */
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

/** The type spelled as the catalog spells it: DuckDB's own names, member names never quoted. */
export function formatDuckType(t: DuckType): string {
  switch (t.kind) {
    case 'scalar':
      return t.name;
    case 'list':
      return `${formatDuckType(t.of)}[]`;
    case 'struct':
      return `STRUCT(${t.members.map(([n, m]) => `${n} ${formatDuckType(m)}`).join(', ')})`;
    case 'map':
      return `MAP(${formatDuckType(t.key)}, ${formatDuckType(t.value)})`;
  }
}
