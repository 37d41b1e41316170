import type { TObject, TSchema } from 'typebox';
import { recordJson } from '../lib/record-json.ts';

export type Serialize = (data: unknown) => string;

const SCALAR_TYPES = new Set(['string', 'number', 'integer', 'boolean', 'null']);

/** True when every property of an object schema is a scalar (or a nullable scalar): a frozen value of it cannot change. */
function isFlatObject(schema: TSchema): boolean {
  const s = schema as { type?: unknown; properties?: Record<string, { type?: unknown }> };
  if (s.type !== 'object' || s.properties === undefined) return false;
  return Object.values(s.properties).every((p) =>
    (Array.isArray(p.type) ? p.type : [p.type]).every((t) => typeof t === 'string' && SCALAR_TYPES.has(t)),
  );
}

/**
 * A serializer for one object schema that writes the very bytes of the schema's own serializer
 * (`whole`), but keeps the JSON of each frozen member whose schema is a flat object (scalars only) and
 * writes it again as is when the same object comes back. An IP lookup's answer is mostly two such
 * members, the dataset's network and location records, which are frozen, deduplicated and shared by
 * every address of their range: writing them anew was about a tenth of a lookup's CPU time.
 *
 * A member that carries its own JSON (freezeWithJson, lib/record-json.ts: the dataset's network
 * records and their honest variants, the shared location answers and the prior-only intelligence,
 * each made once with its JSON) is written as it carries it, with no cache to consult or fill. The
 * tests check that text against `compile(memberSchema)` for every network record of the real dataset.
 *
 * Members are written in the schema's order, each by `compile(memberSchema)` (the compiler of the
 * route's own serializer), joined as that serializer joins them; an absent optional member is left
 * out. Anything out of the ordinary (not an object, a required member missing, an object member that is
 * not an object) goes to `whole`, which then writes it or throws as it always did. A frozen object
 * with scalar members cannot change, so its kept JSON is always current. Each member's cache holds at
 * most `capacity` strings and is emptied when full; it holds the records strongly until then.
 */
export function frozenPartsSerializer(
  schema: TObject,
  compile: (member: TSchema) => Serialize,
  whole: Serialize,
  capacity = 65_536,
): Serialize {
  const required = new Set(schema.required ?? []);
  const members = Object.entries(schema.properties).map(([name, member]) => ({
    name,
    /** `"name":` */
    prefix: `${JSON.stringify(name)}:`,
    required: required.has(name),
    object: (member as { type?: unknown }).type === 'object',
    serialize: compile(member),
    cache: isFlatObject(member) ? new Map<object, string>() : undefined,
  }));
  const count = members.length;

  return (data) => {
    if (typeof data !== 'object' || data === null) return whole(data);
    const record = data as Record<string, unknown>;
    let json = '{';
    let first = true;
    for (let i = 0; i < count; i++) {
      const m = members[i]!;
      const value = record[m.name];
      if (value === undefined) {
        if (m.required) return whole(data);
        continue;
      }
      if (m.object && (typeof value !== 'object' || value === null)) return whole(data);
      // A record made with its JSON (lib/record-json.ts): nothing to write, nothing to look up.
      let part = m.object ? recordJson(value as object) : undefined;
      if (part === undefined) {
        const cache = m.cache;
        if (cache === undefined || !Object.isFrozen(value)) part = m.serialize(value);
        else {
          part = cache.get(value as object);
          if (part === undefined) {
            part = m.serialize(value);
            // Made flat now (a serializer's output is a tree of concatenations), or every answer that
            // includes it would copy the tree's pieces again when node writes it.
            part.charCodeAt(0);
            if (cache.size >= capacity) cache.clear();
            cache.set(value as object, part);
          }
        }
      }
      json += first ? m.prefix + part : `,${m.prefix}${part}`;
      first = false;
    }
    return `${json}}`;
  };
}

/**
 * A serializer for `{ results: T[], invalid: string[] }` (the batch lookup's answer) that writes the
 * very bytes of the schema's own serializer (`whole`): each result by `item` (a frozenPartsSerializer
 * of the result schema, so the records' JSON is copied, not written again), joined as that serializer
 * joins array items, `invalid` as JSON.stringify writes an array of strings (as that serializer does).
 *
 * The answer is written as UTF-8 straight into one Buffer, result by result. Joined into one string
 * (about 480 KB for 1,000 addresses), a single city or ISP name outside Latin-1 made the whole text
 * two-byte, and node then encoded it again on its way to the socket: the join and that encoding
 * were about half of a batch's CPU time. Anything else goes to `whole`.
 */
export function batchSerializer(item: Serialize, whole: Serialize): (data: unknown) => string | Buffer {
  return (data) => {
    if (typeof data !== 'object' || data === null) return whole(data);
    const { results, invalid } = data as { results?: unknown; invalid?: unknown };
    if (!Array.isArray(results) || !Array.isArray(invalid) || !invalid.every((s) => typeof s === 'string')) return whole(data);
    let out = Buffer.allocUnsafe(results.length * 640 + 256);
    let at = out.write('{"results":[', 0, 'latin1');
    const put = (text: string) => {
      // UTF-8 needs at most 3 bytes per UTF-16 unit (a surrogate pair: 4 bytes for 2 units).
      const most = text.length * 3;
      if (at + most > out.length) {
        const bigger = Buffer.allocUnsafe(Math.max(out.length * 2, at + most));
        out.copy(bigger, 0, 0, at);
        out = bigger;
      }
      at += out.write(text, at, 'utf8');
    };
    for (let i = 0; i < results.length; i++) {
      if (i > 0) put(',');
      put(item(results[i]));
    }
    put(`],"invalid":${JSON.stringify(invalid)}}`);
    return out.subarray(0, at);
  };
}
