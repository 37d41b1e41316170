/**
 * The JSON a frozen answer record carries, as UTF-8 bytes, made once when the record is made. An IP
 * lookup's answer is mostly shared records (the dataset's network records and their honest variants,
 * the country-only and no-place locations, the prior-only intelligence), each answered for every
 * address of its range: with its JSON bytes at hand, the HTTP answer copies them into its buffer
 * instead of writing and encoding them anew, and keeps no cache of them. (The dataset's location
 * records are too many to double: they carry none, see honest-location.ts.)
 *
 * Bytes rather than text: copying 200 bytes into a Buffer costs about a quarter of encoding a
 * 200-character string into it (39 vs 150 ns measured on Node 20), and an answer holds three records.
 *
 * The key is a symbol on a non-enumerable property, so JSON.stringify, object spread, Object.keys and
 * deepStrictEqual do not see it; a spread copy (`{ ...rec }`) carries no JSON, as it may differ.
 */
export const RECORD_JSON: unique symbol = Symbol('record JSON');

/**
 * Freezes `record` with the UTF-8 bytes of its JSON (JSON.stringify). For records whose members are
 * scalars, or arrays and objects frozen as well: the JSON never goes stale. The member order is the
 * record's own: callers make records in their schema's order, and the HTTP serializer tests check the
 * bytes against the route's own serializer for every maker (http/frozen-parts-json.test.ts). The JSON
 * of every network record of the packaged dataset takes about 30 MB of heap once all have been made.
 */
export function freezeWithJson<T extends object>(record: T): Readonly<T> {
  Object.defineProperty(record, RECORD_JSON, { value: Buffer.from(JSON.stringify(record), 'utf8') });
  return Object.freeze(record);
}

/** The JSON bytes a record carries (freezeWithJson), or undefined. */
export const recordJson = (value: object): Buffer | undefined => (value as { [RECORD_JSON]?: Buffer })[RECORD_JSON];
