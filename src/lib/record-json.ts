/**
 * The JSON text a frozen answer record carries, made once when the record is made. An IP lookup's
 * answer is mostly shared records (the dataset's network and location records and their honest
 * variants, the country-only and no-place locations, the prior-only intelligence), each answered for
 * every address of its range: with its JSON at hand, a transport that writes JSON copies it instead of
 * writing it anew, and keeps no cache of it.
 *
 * The key is a symbol on a non-enumerable property, so JSON.stringify, object spread, Object.keys and
 * deepStrictEqual do not see it; a spread copy (`{ ...rec }`) carries no JSON, as it may differ.
 */
export const RECORD_JSON: unique symbol = Symbol('record JSON');

/**
 * Freezes `record` with its JSON text (JSON.stringify, flat). For records whose members are scalars,
 * or arrays and objects frozen as well: the text never goes stale. The member order is the record's
 * own: callers make records in their schema's order, and the HTTP serializer tests check the text
 * against the route's own serializer for every maker (http/frozen-parts-json.test.ts). The JSON of
 * every network record of the packaged dataset takes about 30 MB of heap once all have been made, and
 * that of every place 145–185 MiB more (docs/operations.md, "Memory stays within its budget").
 *
 * Makers of records read on every lookup end their literal with a slot for it, `[RECORD_JSON]:
 * undefined`, so the text lives in the record itself: a property that a literal does not have goes,
 * when added, to a separate array of properties, one more object to fetch from memory per record
 * written, and an answer writes two or three records from all over the heap. The property is made
 * non-enumerable here either way, and a maker's records keep one hidden class.
 */
export function freezeWithJson<T extends object>(record: T): Readonly<T> {
  // JSON.stringify skips symbol keys, so a slot in the literal is not in the text.
  Object.defineProperty(record, RECORD_JSON, { value: JSON.stringify(record), enumerable: false });
  return Object.freeze(record);
}

/** The JSON a record carries (freezeWithJson), or undefined. */
export const recordJson = (value: object): string | undefined => (value as { [RECORD_JSON]?: string })[RECORD_JSON];
