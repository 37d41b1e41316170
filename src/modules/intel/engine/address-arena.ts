/**
 * The memory of the address store, in typed arrays outside the JS heap and inside a byte budget:
 *
 * - entries (one per address): `key` (the IPv4 address, or the slot holding an IPv6 address's four
 *   words), `head` (first observation slot; the next free entry while free), `kind` (0 free, 4, 6);
 * - an open-addressing hash table of entry ids (linear probing, load at most 3/4, backward-shift
 *   deletion, so no tombstones), hashed with a per-process seed so chosen addresses cannot collide,
 *   with a byte of each slot's hash beside it (`fp`, 0 when empty): a lookup of an unknown address
 *   reads that byte array and touches an entry only when the byte matches (1 in 255);
 * - slots of SLOT_WORDS 32-bit words for observations (and IPv6 keys), chained per address, with a
 *   free list through word 0.
 *
 * Ids and slot indexes start at 1; 0 means none. Arrays grow (see `grown`), or by what is left of the
 * budget, and never shrink: freed entries and slots are reused. growEntries/growSlots say false when
 * the budget has no room left, and the store evicts instead.
 */
export const SLOT_WORDS = 6;

/** Kinds of slot (3 bits of the tag): 1..4 and 7 are the observations of address-facts.ts, 5 and 6 the two windows. */
export const LOGIN = 5;
export const CRAWL = 6;

/**
 * Slot words. An observation: next, tag (kind | feed << 3 | key id << 7), first, last, count, and
 * for a device the id of its latest version. A LOGIN window: start in FIRST, attempts in COUNT. A
 * CRAWL window: the paths it holds in the tag's key bits, start in FIRST, the first two path hashes
 * in LAST and EXTRA, the first extension slot in COUNT; an extension slot (not on the address's
 * chain) holds the next extension in word 0 and five more hashes in words 1..5. An IPv6 key slot
 * holds the address in words 0..3.
 */
export const NEXT = 0;
export const TAG = 1;
export const FIRST = 2;
export const LAST = 3;
export const COUNT = 4;
export const EXTRA = 5;
export const KEY_SHIFT = 7;
/** Tag bits naming kind and key, without the feed. */
export const KIND_KEY = ~(15 << 3);

/** key + head (4 bytes each) + kind (1 byte). */
export const ENTRY_BYTES = 9;
const SLOT_BYTES = 4 * SLOT_WORDS;
/** Entry id + hash byte per table slot. */
const TABLE_BYTES = 5;
/** A growth smaller than this is refused: evicting is cheaper than copying the arrays for a few more. */
const MIN_GROW = 256;

/**
 * The next capacity: doubling while small, then a quarter more, so that arrays which stop growing at
 * the budget hold little room that the mix of addresses and observations does not use (they never
 * shrink), and a growth briefly holds 2.25 times, not 3 times, the array it replaces.
 */
const grown = (cap: number) => (cap < 65_536 ? cap * 2 : cap + (cap >> 2));

function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The hash byte kept beside a table slot: the top 8 bits (the slot index uses the low ones), never 0. */
const fpOf = (h: number) => h >>> 24 || 1;

/** The table size for n entries at a load of at most 3/4. */
function tableFor(n: number): number {
  let size = 1024;
  while (size * 3 < n * 4) size *= 2;
  return size;
}

export class AddressArena {
  key: Uint32Array;
  head: Uint32Array;
  kind: Uint8Array;
  slots: Uint32Array;
  private table: Uint32Array;
  private fp: Uint8Array;
  private mask: number;
  /** Entries in use. */
  live = 0;
  /** Entry ids below this have been handed out at least once. */
  entryTop = 1;
  private freeEntry = 0;
  private freeEntries = 0;
  private slotTop = 1;
  private freeSlot = 0;
  private freeSlots = 0;

  constructor(
    /** Bytes the arrays may take. */
    private readonly limit: number,
    private readonly seed: number,
  ) {
    this.key = new Uint32Array(1024);
    this.head = new Uint32Array(1024);
    this.kind = new Uint8Array(1024);
    this.table = new Uint32Array(tableFor(1024));
    this.fp = new Uint8Array(this.table.length);
    this.mask = this.table.length - 1;
    this.slots = new Uint32Array(4096 * SLOT_WORDS);
  }

  /** Bytes of the arrays (what the process holds for them, used or not). */
  get arrayBytes(): number {
    return this.key.length * ENTRY_BYTES + this.table.length * TABLE_BYTES + this.slots.length * 4;
  }

  get entriesFree(): number {
    return this.freeEntries + this.key.length - this.entryTop;
  }

  get slotsFree(): number {
    return this.freeSlots + this.slots.length / SLOT_WORDS - this.slotTop;
  }

  private hash4(v: number): number {
    return fmix32(v ^ this.seed);
  }

  private hash6(w: ArrayLike<number>, at: number): number {
    let h = fmix32(this.seed ^ w[at]!);
    h = fmix32(h ^ w[at + 1]!);
    h = fmix32(h ^ w[at + 2]!);
    return fmix32(h ^ w[at + 3]!);
  }

  private home(e: number): number {
    return this.kind[e] === 4 ? this.hash4(this.key[e]!) : this.hash6(this.slots, this.key[e]! * SLOT_WORDS);
  }

  /** The entry of an IPv4 address, or 0. Allocates nothing. */
  find4(v: number): number {
    const fp = this.fp;
    const mask = this.mask;
    const h = this.hash4(v);
    const want = fpOf(h);
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const f = fp[i]!;
      if (f === 0) return 0;
      if (f !== want) continue;
      const e = this.table[i]!;
      if (this.key[e] === v && this.kind[e] === 4) return e;
    }
  }

  /** The entry of an IPv6 address (four words, most significant first), or 0. Allocates nothing. */
  find6(w: Uint32Array): number {
    const fp = this.fp;
    const mask = this.mask;
    const slots = this.slots;
    const h = this.hash6(w, 0);
    const want = fpOf(h);
    for (let i = h & mask; ; i = (i + 1) & mask) {
      const f = fp[i]!;
      if (f === 0) return 0;
      if (f !== want) continue;
      const e = this.table[i]!;
      if (this.kind[e] !== 6) continue;
      const k = this.key[e]! * SLOT_WORDS;
      if (slots[k] === w[0] && slots[k + 1] === w[1] && slots[k + 2] === w[2] && slots[k + 3] === w[3]) return e;
    }
  }

  /** A new entry for an address not in the table; the caller made room (one entry, one slot for IPv6). */
  add4(v: number): number {
    const e = this.allocEntry();
    this.key[e] = v;
    this.kind[e] = 4;
    this.put(e, this.hash4(v));
    return e;
  }

  add6(w: Uint32Array): number {
    const s = this.allocSlot();
    this.slots.set(w, s * SLOT_WORDS);
    const e = this.allocEntry();
    this.key[e] = s;
    this.kind[e] = 6;
    this.put(e, this.hash6(w, 0));
    return e;
  }

  /** Takes the entry out of the table and frees it (its observation slots are the caller's to free first). */
  remove(e: number): void {
    const table = this.table;
    const mask = this.mask;
    let i = this.home(e) & mask;
    while (table[i] !== e) i = (i + 1) & mask;
    // Backward shift: pull later members of the probe run into the hole unless their home lies after it.
    for (let j = (i + 1) & mask; table[j] !== 0; j = (j + 1) & mask) {
      const f = table[j]!;
      if (((j - (this.home(f) & mask)) & mask) >= ((j - i) & mask)) {
        table[i] = f;
        this.fp[i] = this.fp[j]!;
        i = j;
      }
    }
    table[i] = 0;
    this.fp[i] = 0;
    if (this.kind[e] === 6) this.freeSlotAt(this.key[e]!);
    this.kind[e] = 0;
    this.head[e] = this.freeEntry;
    this.freeEntry = e;
    this.freeEntries++;
    this.live--;
  }

  allocSlot(): number {
    let s = this.freeSlot;
    if (s !== 0) {
      this.freeSlot = this.slots[s * SLOT_WORDS]!;
      this.freeSlots--;
    } else s = this.slotTop++;
    this.slots.fill(0, s * SLOT_WORDS, (s + 1) * SLOT_WORDS);
    return s;
  }

  freeSlotAt(s: number): void {
    this.slots[s * SLOT_WORDS] = this.freeSlot;
    this.freeSlot = s;
    this.freeSlots++;
  }

  private allocEntry(): number {
    let e = this.freeEntry;
    if (e !== 0) {
      this.freeEntry = this.head[e]!;
      this.freeEntries--;
    } else e = this.entryTop++;
    this.head[e] = 0;
    this.live++;
    return e;
  }

  private put(e: number, h: number): void {
    const mask = this.mask;
    let i = h & mask;
    while (this.table[i] !== 0) i = (i + 1) & mask;
    this.table[i] = e;
    this.fp[i] = fpOf(h);
  }

  private room(): number {
    return this.limit - this.arrayBytes;
  }

  /** Doubles the entries (and the table when its load would pass 3/4), or takes what the budget leaves. */
  growEntries(): boolean {
    const cap = this.key.length;
    const room = this.room();
    let next = grown(cap);
    let table = tableFor(next);
    if ((next - cap) * ENTRY_BYTES + (table - this.table.length) * TABLE_BYTES > room) {
      // As many as fit without a bigger table.
      table = this.table.length;
      next = Math.min(next, Math.floor((table * 3) / 4), cap + Math.floor(Math.max(0, room) / ENTRY_BYTES));
      if (next - cap < MIN_GROW) return false;
    }
    const key = new Uint32Array(next);
    key.set(this.key);
    const head = new Uint32Array(next);
    head.set(this.head);
    const kind = new Uint8Array(next);
    kind.set(this.kind);
    this.key = key;
    this.head = head;
    this.kind = kind;
    if (table !== this.table.length) {
      this.table = new Uint32Array(table);
      this.fp = new Uint8Array(table);
      this.mask = table - 1;
      for (let e = 1; e < this.entryTop; e++) if (this.kind[e] !== 0) this.put(e, this.home(e));
    }
    return true;
  }

  growSlots(): boolean {
    const cap = this.slots.length / SLOT_WORDS;
    const next = Math.min(grown(cap), cap + Math.floor(Math.max(0, this.room()) / SLOT_BYTES));
    if (next - cap < MIN_GROW) return false;
    const slots = new Uint32Array(next * SLOT_WORDS);
    slots.set(this.slots);
    this.slots = slots;
    return true;
  }
}
