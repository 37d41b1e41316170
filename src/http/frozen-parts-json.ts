import type { TObject, TSchema } from 'typebox';
import { RECORD_JSON, recordJson } from '../lib/record-json.ts';
import { PackedBatch } from '../modules/lookup/packed-batch.ts';

export type Serialize = (data: unknown) => string;
/** Writes the JSON of `data` at the end of `w`. */
export type WriteJson = (w: JsonWriter, data: unknown) => void;

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
 * writes it again as is when the same object comes back: for frozen records made without their JSON.
 * An IP lookup's answer is mostly records made with it (below), which are frozen, deduplicated and
 * shared by every address of their range: writing them anew was about a tenth of a lookup's CPU time.
 *
 * A member that carries its own JSON (freezeWithJson, lib/record-json.ts: the dataset's network and
 * location records and their honest variants, the shared location answers and the prior-only
 * intelligence, each made once with its JSON) is written as it carries it, with no cache to consult or
 * fill; the cache is for frozen records made without it. The tests check that text against
 * `compile(memberSchema)` for every network and location record of the real dataset.
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
 * UTF-8 JSON written into one Buffer that grows as needed: a batch answer is written here part by
 * part (the records' JSON each encoded once, straight into place), never built as one string first.
 */
export class JsonWriter {
  buf: Buffer;
  at = 0;
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(size);
  }
  room(n: number): void {
    if (this.at + n <= this.buf.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n));
    this.buf.copy(bigger, 0, 0, this.at);
    this.buf = bigger;
  }
  /** A few bytes (a member's name): copied one by one, cheaper than a call to set for so few. */
  short(b: Uint8Array): void {
    const n = b.length;
    this.room(n);
    const buf = this.buf;
    let at = this.at;
    for (let i = 0; i < n; i++) buf[at++] = b[i]!;
    this.at = at;
  }
  text(s: string): void {
    // UTF-8 needs at most 3 bytes per UTF-16 unit (a surrogate pair: 4 bytes for 2 units).
    this.room(s.length * 3);
    this.at += this.buf.write(s, this.at, 'utf8');
  }
  /**
   * `s` as a JSON string when it is printable ASCII with no quote or backslash (an IP address): the
   * JSON is then the characters themselves between quotes. False, with nothing written, otherwise.
   */
  plainString(s: string): boolean {
    const n = s.length;
    this.room(n + 2);
    const b = this.buf;
    let at = this.at;
    b[at++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
      b[at++] = c;
    }
    b[at++] = 0x22;
    this.at = at;
    return true;
  }
  done(): Buffer {
    return this.buf.subarray(0, this.at);
  }
}

/** A bounded cache that keeps what was used in the last two fills of `capacity` entries. */
class TwoGenerations<K extends object, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  constructor(private readonly capacity: number) {}
  get(k: K): V | undefined {
    const v = this.young.get(k);
    if (v !== undefined) return v;
    const o = this.old.get(k);
    if (o !== undefined) this.set(k, o);
    return o;
  }
  set(k: K, v: V): void {
    if (this.young.size >= this.capacity) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(k, v);
  }
}

/** A plain string schema (no format, no transform): its serializer writes printable ASCII between quotes as it is. */
const isPlainString = (schema: TSchema): boolean => {
  const s = schema as { type?: unknown; format?: unknown; const?: unknown; enum?: unknown };
  return s.type === 'string' && s.format === undefined && s.const === undefined && s.enum === undefined;
};

/**
 * frozenPartsSerializer as a writer into a JsonWriter, for the batch answer: the very bytes of the
 * schema's own serializer (`whole`), with the JSON of each frozen member whose schema is a flat
 * object (scalars only) kept and written again when the same object comes back, and members that
 * carry their own JSON (lib/record-json.ts) written as they carry it. Nothing is built as text per
 * result: each part is encoded straight into the answer's buffer.
 *
 * Members are written in the schema's order, each by `compile(memberSchema)` (the compiler of the
 * route's own serializer), joined as that serializer joins them; an absent optional member is left
 * out; a plain string member that needs no escaping (the address) is written as its characters.
 * Anything out of the ordinary (not an object, a required member missing, an object member that is
 * not an object) goes to `whole`, which then writes it or throws as it always did. A frozen object
 * with scalar members cannot change, so its kept JSON is always current. Each member's cache keeps
 * what was used in its last two fills of `capacity` entries, holding those records strongly.
 */
export function frozenPartsWriter(
  schema: TObject,
  compile: (member: TSchema) => Serialize,
  whole: Serialize,
  capacity = 32_768,
): WriteJson {
  const required = new Set(schema.required ?? []);
  const members = Object.entries(schema.properties).map(([name, member]) => ({
    name,
    /** `{"name":` for the first member written, `,"name":` for the others. */
    first: Buffer.from(`{${JSON.stringify(name)}:`),
    next: Buffer.from(`,${JSON.stringify(name)}:`),
    required: required.has(name),
    object: (member as { type?: unknown }).type === 'object',
    plain: isPlainString(member),
    serialize: compile(member),
    cache: isFlatObject(member) ? new TwoGenerations<object, string>(capacity) : undefined,
  }));
  // The writer is generated with one block of code per member, as the schema's own serializer is:
  // each member's reads (its value, the JSON its record carries) then see one kind of object, where
  // a loop over the members would make every read see every member's records and fall back to a
  // slower lookup by name. The generated code names members by index only; names enter as JSON strings.
  const fail = (w: JsonWriter, start: number, data: unknown): void => {
    w.at = start;
    w.text(whole(data));
  };
  const blocks = members.map((m, i) => {
    const head = `w.short(first ? m[${i}].first : m[${i}].next); first = false;`;
    const absent = m.required ? 'return fail(w, start, data);' : '';
    let body: string;
    if (m.object)
      body = `if (typeof v !== 'object' || v === null) return fail(w, start, data);
        ${head}
        const c = v[KEY];
        if (c !== undefined) w.text(c);
        else ${
          m.cache
            ? // Only frozen records enter the cache (and stay frozen), so a record found there needs no check.
              `{
          let k = m[${i}].cache.get(v);
          if (k === undefined && Object.isFrozen(v)) {
            // Made flat now (a serializer's output is a tree of concatenations), or every write would flatten it again.
            k = m[${i}].serialize(v);
            k.charCodeAt(0);
            m[${i}].cache.set(v, k);
          }
          if (k !== undefined) w.text(k);
          else w.text(m[${i}].serialize(v));
        }`
            : `w.text(m[${i}].serialize(v));`
        }`;
    else if (m.plain) body = `${head} if (typeof v !== 'string' || !w.plainString(v)) w.text(m[${i}].serialize(v));`;
    else body = `${head} w.text(m[${i}].serialize(v));`;
    return `{ const v = data[${JSON.stringify(m.name)}]; if (v === undefined) { ${absent} } else { ${body} } }`;
  });
  const source = `return (w, data) => {
    if (typeof data !== 'object' || data === null) return fail(w, w.at, data);
    const start = w.at;
    let first = true;
    ${blocks.join('\n    ')}
    if (first) return w.text('{}');
    w.room(1);
    w.buf[w.at++] = 0x7d;
  };`;
  return new Function('m', 'KEY', 'fail', source)(members, RECORD_JSON, fail) as WriteJson;
}

/**
 * A serializer for `{ results: T[], invalid: string[] }` (the batch lookup's answer) that writes the
 * very bytes of the schema's own serializer (`whole`): each result by `item` (a frozenPartsWriter of
 * the result schema, so the records' JSON is copied, not written again), joined as that
 * serializer joins array items, `invalid` as JSON.stringify writes an array of strings (as that
 * serializer does). Anything else goes to `whole`.
 *
 * The answer is assembled as UTF-8 bytes in one Buffer, result by result, with no text per result:
 * written as text (about 480 KB for 1,000 addresses), a single city or ISP name outside Latin-1 made
 * it two-byte and node encoded it all again on the way to the socket; written result by result as
 * text, building and encoding each result's text was most of a batch's CPU time.
 */
export function batchSerializer(
  item: WriteJson,
  whole: Serialize,
  packed?: (w: JsonWriter, batch: PackedBatch) => void,
): (data: unknown) => string | Buffer {
  const OPEN = Buffer.from('{"results":[');
  const COMMA = 0x2c;
  return (data) => {
    if (data instanceof PackedBatch) {
      if (packed === undefined) throw new Error('batchSerializer: a PackedBatch needs a packed writer');
      const w = new JsonWriter(data.count * 560 + 256);
      w.short(OPEN);
      packed(w, data);
      w.text(`],"invalid":${JSON.stringify(data.invalid)}}`);
      return w.done();
    }
    if (typeof data !== 'object' || data === null) return whole(data);
    const { results, invalid } = data as { results?: unknown; invalid?: unknown };
    if (!Array.isArray(results) || !Array.isArray(invalid) || !invalid.every((s) => typeof s === 'string')) return whole(data);
    const w = new JsonWriter(results.length * 560 + 256);
    w.short(OPEN);
    for (let i = 0; i < results.length; i++) {
      if (i > 0) {
        w.room(1);
        w.buf[w.at++] = COMMA;
      }
      item(w, results[i]);
    }
    w.text(`],"invalid":${JSON.stringify(invalid)}}`);
    return w.done();
  };
}

/** The members a PackedBatch's handles stand for, in the order the result schema writes them. */
const PACKED_MEMBERS = ['ip', 'network', 'location', 'intelligence'];

/**
 * Writes a PackedBatch's results, comma-separated, as `item` (a frozenPartsWriter of `schema`) writes
 * the same results: those given as objects by `item`, the others as `{"ip":"…","network":…,
 * "location":…,"intelligence":…}` with the records' JSON copied from the batch's arena. The schema's
 * first members must be those four, the address a plain string (checked here, once): the answer is then
 * what `item` writes for the record objects the handles stand for (the tests compare the bytes).
 *
 * Before any copy, one pass reads the start of every handle's text, so that the memory waits of the
 * whole batch overlap instead of coming one copy at a time.
 */
export function packedResultsWriter(schema: TObject, item: WriteJson): (w: JsonWriter, batch: PackedBatch) => void {
  const names = Object.keys(schema.properties);
  const required = new Set(schema.required ?? []);
  if (PACKED_MEMBERS.some((name, i) => names[i] !== name || !required.has(name)) || !isPlainString(schema.properties.ip!)) {
    throw new Error(`packedResultsWriter: the result schema must begin with the required members ${PACKED_MEMBERS.join(', ')}`);
  }
  const IP = Buffer.from('{"ip":');
  const NETWORK = Buffer.from(',"network":');
  const LOCATION = Buffer.from(',"location":');
  const INTELLIGENCE = Buffer.from(',"intelligence":');
  // The intelligence of plain results is one of a few shared answers (one per prior score).
  const intelBytes = new Map<object, Buffer>();
  const intelligenceJson = (intel: object): Buffer => {
    let b = intelBytes.get(intel);
    if (b === undefined) {
      if (intelBytes.size >= 256) intelBytes.clear();
      intelBytes.set(intel, (b = Buffer.from(recordJson(intel)!, 'utf8')));
    }
    return b;
  };
  return (w, batch) => {
    const { addresses, results, network, location, intelligence, json } = batch;
    const n = addresses.length;
    let room = 0;
    for (let k = 0; k < n; k++) if (results[k] === undefined) room += json.length(network[k]!) + json.length(location[k]!);
    w.room(room + n * 64);
    for (let k = 0; k < n; k++) {
      if (k > 0) {
        w.room(1);
        w.buf[w.at++] = 0x2c;
      }
      const r = results[k];
      if (r !== undefined) {
        item(w, r);
        continue;
      }
      w.short(IP);
      const text = addresses[k]!.text;
      if (!w.plainString(text)) w.text(JSON.stringify(text));
      w.short(NETWORK);
      const nh = network[k]!;
      w.room(json.length(nh));
      w.at += json.copy(nh, w.buf, w.at);
      w.short(LOCATION);
      const lh = location[k]!;
      w.room(json.length(lh));
      w.at += json.copy(lh, w.buf, w.at);
      w.short(INTELLIGENCE);
      const ib = intelligenceJson(intelligence[k]!);
      w.room(ib.length + 1);
      w.buf.set(ib, w.at);
      w.at += ib.length;
      w.buf[w.at++] = 0x7d;
    }
  };
}
