import type { ParsedIp } from '../../../lib/ip-address.ts';
import { formatV4, formatV6 } from '../../../lib/ip-address.ts';
import { AddressArena, COUNT, CRAWL, EXTRA, FIRST, KEY_SHIFT, KIND_KEY, LAST, LOGIN, NEXT, SLOT_WORDS as W, TAG } from './address-arena.ts';
import { DEVICE, isObservation, REQUESTS, type AddressObs } from './address-facts.ts';
import { BEHAVIOR_WEIGHT, CATEGORY_WEIGHT } from './risk-score.ts';
import { EvictionPolicy } from './eviction-policy.ts';
import { StringPool } from './string-pool.ts';

const EXT_HASHES = 5;
/** Key ids have 25 bits of the tag; a new key past this is not recorded (it would take > 4 GB of strings first). */
const MAX_KEYS = 2 ** 25 - 1;

/** Slots one record can take at most (an HTTP record: five behaviours, BOTNET, both windows, an extension, a device, its request count, an IPv6 key). */
export const RECORD_SLOTS = 13;
/** Kept free below the budget for the strings a single record may add before the next check. */
const MARGIN = 16 * 1024;
/**
 * The share of the budget for interned strings, which the arrays never take: were the arrays to fill
 * the budget, one new provider name would call for evictions that free no bytes while the names they
 * hold are shared with other addresses. Past it (distinct names by the hundred thousand) addresses
 * are evicted until their strings are freed.
 */
const STRING_SHARE = 1 / 16;

/** The risk weight a key carries: a provider key by its type, a category or a behaviour by its own. */
function keyWeight(s: string): number {
  const bar = s.indexOf('|');
  return bar >= 0 ? (CATEGORY_WEIGHT[s.slice(bar + 1)] ?? 0) : (CATEGORY_WEIGHT[s] ?? BEHAVIOR_WEIGHT[s] ?? 0);
}

export interface AddressStoreOptions {
  budgetBytes: number;
  /** Source feed ids, in the order their index is stored (4 bits: at most 16). */
  feeds: readonly string[];
  /** Called once, the first time a record needs an eviction to fit. */
  onBudgetReached?: () => void;
  /** Hash seed (tests); random by default. */
  seed?: number;
}

/**
 * Per-address observations in the arena (address-arena.ts), inside a byte budget: before each record
 * the store makes room for what the record can add at most, growing the arrays while the budget
 * allows and otherwise evicting the least informative addresses (eviction-policy.ts), so nothing
 * later in the record can fail. Observations keep the order in which their (kind, key) was first
 * seen, each key's feeds together, which is the order composeIntelligence lists evidence in.
 */
export class AddressStore {
  readonly pool = new StringPool(keyWeight);
  private readonly arena: AddressArena;
  private readonly feedIndex = new Map<string, number>();
  /** Bytes the strings may take (the arrays take the rest of the budget, less MARGIN). */
  private readonly stringLimit: number;
  private readonly eviction: EvictionPolicy;
  private readonly dropEntry = (e: number) => this.drop(e);
  private pruneAt = 0;
  private pruneHorizon = 0;
  private reached = false;
  /** Addresses evicted to stay inside the budget (not those aged out of the window). */
  evictions = 0;

  constructor(private readonly options: AddressStoreOptions) {
    if (options.feeds.length > 16) throw new Error('at most 16 feeds');
    for (const [i, f] of options.feeds.entries()) this.feedIndex.set(f, i);
    this.stringLimit = Math.floor(options.budgetBytes * STRING_SHARE);
    const seed = options.seed ?? (Math.random() * 2 ** 32) >>> 0;
    this.arena = new AddressArena(options.budgetBytes - MARGIN - this.stringLimit, seed);
    this.eviction = new EvictionPolicy(this.arena, this.pool, seed);
    this.pool.permanent('');
    for (const k of [...Object.keys(CATEGORY_WEIGHT), ...Object.keys(BEHAVIOR_WEIGHT)]) this.pool.permanent(k);
  }

  get addresses(): number {
    return this.arena.live;
  }

  /** Bytes held: the arrays (allocated, used or not) and the interned strings. */
  get bytes(): number {
    return this.arena.arrayBytes + this.pool.bytes;
  }

  get budgetBytes(): number {
    return this.options.budgetBytes;
  }

  /** The entry of an address, or 0. Allocates nothing. */
  find(ip: ParsedIp): number {
    return ip.version === 4 ? this.arena.find4(ip.v4) : this.arena.find6(ip.v6);
  }

  /**
   * The entry of an address, made if new. Makes room for one record's updates first (growing within
   * the budget, else evicting), so nothing later in the record can fail or evict.
   */
  entry(ip: ParsedIp, nowS: number): number {
    const a = this.arena;
    if (a.entriesFree < 1 || a.slotsFree < RECORD_SLOTS || this.pool.bytes > this.stringLimit) this.makeRoom(nowS);
    const e = this.find(ip);
    if (e !== 0) return e;
    return ip.version === 4 ? a.add4(ip.v4) : a.add6(ip.v6);
  }

  /**
   * Evicts if new strings took the store past its share for them: entry() checks before a record,
   * and a record's strings (a provider key, a device version) usually fit in MARGIN, but a version is
   * as long as the User-Agent says. Called after each batch, so between batches the budget holds.
   */
  settle(nowS: number): void {
    if (this.pool.bytes > this.stringLimit) this.makeRoom(nowS);
  }

  /** Set by seek() when a slot is missing: the slot a new one is linked after (0: first of its entry). */
  private insertAfter = 0;

  /** One more observation of (kind, key) by feed at t (n observations at once). */
  bump(e: number, kind: number, key: string, feed: string, t: number, n = 1): void {
    const slots = this.arena.slots;
    const s = this.seek(e, kind, key, feed);
    if (s > 0) {
      const o = s * W;
      if (t < slots[o + FIRST]!) slots[o + FIRST] = t;
      if (t > slots[o + LAST]!) slots[o + LAST] = t;
      slots[o + COUNT] = slots[o + COUNT]! + n;
      return;
    }
    if (s === 0) this.place(e, kind, key, feed, t, n);
  }

  /**
   * One more request from the address on this feed at t: counted once, whatever behaviours it showed.
   * The slot names no string (key 0), so it frees none when dropped.
   */
  request(e: number, feed: string, t: number): void {
    const slots = this.arena.slots;
    const tag = (REQUESTS | (this.feedIndex.get(feed)! << 3)) >>> 0;
    let tail = 0;
    for (let s = this.arena.head[e]!; s !== 0; s = slots[s * W + NEXT]!) {
      if (slots[s * W + TAG] === tag) {
        const o = s * W;
        if (t < slots[o + FIRST]!) slots[o + FIRST] = t;
        if (t > slots[o + LAST]!) slots[o + LAST] = t;
        slots[o + COUNT] = slots[o + COUNT]! + 1;
        return;
      }
      tail = s;
    }
    const o = this.link(e, tail, REQUESTS, this.feedIndex.get(feed)!, 0) * W;
    const linked = this.arena.slots;
    linked[o + FIRST] = t;
    linked[o + LAST] = t;
    linked[o + COUNT] = 1;
  }

  /** A device observation: the latest version seen wins (an empty one never replaces a known one). */
  device(e: number, os: string, version: string, feed: string, t: number): void {
    const slots = this.arena.slots;
    const s = this.seek(e, DEVICE, os, feed);
    if (s > 0) {
      const o = s * W;
      slots[o + COUNT] = slots[o + COUNT]! + 1;
      if (t >= slots[o + LAST]!) {
        slots[o + LAST] = t;
        if (version) {
          const v = this.acquire(e, version);
          this.pool.release(slots[o + EXTRA]!);
          slots[o + EXTRA] = v;
        }
      }
      if (t < slots[o + FIRST]!) slots[o + FIRST] = t;
      return;
    }
    if (s === 0) this.arena.slots[this.place(e, DEVICE, os, feed, t, 1) * W + EXTRA] = this.acquire(e, version);
  }

  /**
   * The slot of (kind, key, feed) at entry e: its index when it exists (> 0); 0 when it does not, with
   * insertAfter set to the slot a new one goes after (the last of the same kind and key, else the
   * tail, keeping the order each key was first seen); -1 when no new key fits in the key table.
   */
  private seek(e: number, kind: number, key: string, feed: string): number {
    const slots = this.arena.slots;
    const id = this.pool.idOf(key);
    if (id < 0) {
      if (this.pool.size >= MAX_KEYS) return -1;
      this.insertAfter = this.tail(e);
      return 0;
    }
    const tag = (kind | (this.feedIndex.get(feed)! << 3) | (id << KEY_SHIFT)) >>> 0;
    const kindKey = tag & KIND_KEY;
    let after = 0;
    let tail = 0;
    for (let s = this.arena.head[e]!; s !== 0; s = slots[s * W + NEXT]!) {
      const sTag = slots[s * W + TAG]!;
      if (sTag === tag) return s;
      if ((sTag & KIND_KEY) === kindKey) after = s;
      tail = s;
    }
    this.insertAfter = after || tail;
    return 0;
  }

  /** Links a new slot for (kind, key, feed) after the one seek() named, first seen at t; returns its index. */
  private place(e: number, kind: number, key: string, feed: string, t: number, n: number): number {
    const after = this.insertAfter;
    const id = this.pool.idOf(key);
    const kid = id >= 0 ? id : this.acquireNew(e, key);
    if (id >= 0) this.pool.retain(id);
    const s = this.link(e, after, kind, this.feedIndex.get(feed)!, kid);
    const o = s * W;
    const slots = this.arena.slots;
    slots[o + FIRST] = t;
    slots[o + LAST] = t;
    slots[o + COUNT] = n;
    return s;
  }

  /**
   * CREDENTIAL_STUFFING window: counts a login attempt at t; a window opens at the first attempt and lasts windowS. Returns the attempts in
   * it.
   */
  login(e: number, t: number, windowS: number): number {
    const s = this.window(e, LOGIN);
    const slots = this.arena.slots;
    const o = s * W;
    if (slots[o + COUNT] === 0 || !(t - slots[o + FIRST]! < windowS)) {
      slots[o + FIRST] = t;
      slots[o + COUNT] = 0;
    }
    return ++slots[o + COUNT]!;
  }

  /**
   * ACTIVE_CRAWLER window: adds a path (as a 32-bit hash) to the distinct paths since the window
   * opened, holding at most `cap`; a window lasts windowS. Returns how many it holds.
   */
  crawl(e: number, t: number, hash: number, windowS: number, cap: number): number {
    const c = this.window(e, CRAWL);
    const o = c * W;
    const slots = this.arena.slots;
    let n = slots[o + TAG]! >>> KEY_SHIFT;
    if (n === 0 || !(t - slots[o + FIRST]! < windowS)) {
      this.freeExtensions(slots[o + COUNT]!);
      slots[o + FIRST] = t;
      slots[o + COUNT] = 0;
      n = 0;
    }
    if (n >= cap) return n;
    if ((n > 0 && slots[o + LAST] === hash) || (n > 1 && slots[o + EXTRA] === hash)) return n;
    // Hashes 2.. are in the extension slots, EXT_HASHES each.
    let x = slots[o + COUNT]!;
    let lastExt = 0;
    for (let i = 2; i < n; i += EXT_HASHES) {
      for (let k = 0; k < EXT_HASHES && i + k < n; k++) if (slots[x * W + 1 + k] === hash) return n;
      lastExt = x;
      x = slots[x * W]!;
    }
    if (n === 0) slots[o + LAST] = hash;
    else if (n === 1) slots[o + EXTRA] = hash;
    else {
      const k = (n - 2) % EXT_HASHES;
      let ext = lastExt;
      if (k === 0) {
        ext = this.arena.allocSlot();
        if (lastExt === 0) slots[o + COUNT] = ext;
        else slots[lastExt * W] = ext;
      }
      slots[ext * W + 1 + k] = hash;
    }
    slots[o + TAG] = (CRAWL | ((n + 1) << KEY_SHIFT)) >>> 0;
    return n + 1;
  }

  /** The address's observations (not its windows), in the order they were first made. */
  observations(e: number): AddressObs[] {
    const out: AddressObs[] = [];
    const slots = this.arena.slots;
    for (let s = this.arena.head[e]!; s !== 0; s = slots[s * W + NEXT]!) {
      const o = s * W;
      const tag = slots[o + TAG]!;
      const kind = tag & 7;
      if (!isObservation(kind)) continue;
      out.push({
        kind: kind as AddressObs['kind'],
        key: kind === REQUESTS ? '' : this.pool.text(tag >>> KEY_SHIFT),
        feed: this.options.feeds[(tag >>> 3) & 15]!,
        first: slots[o + FIRST]!,
        last: slots[o + LAST]!,
        count: slots[o + COUNT]!,
        version: kind === DEVICE ? this.pool.text(slots[o + EXTRA]!) : '',
      });
    }
    return out;
  }

  /** Latest observation of any kind, window starts included (0 when none). */
  lastSeen(e: number): number {
    const slots = this.arena.slots;
    let last = 0;
    for (let s = this.arena.head[e]!; s !== 0; s = slots[s * W + NEXT]!) {
      const o = s * W;
      const t = isObservation(slots[o + TAG]! & 7) ? slots[o + LAST]! : slots[o + FIRST]!;
      if (t > last) last = t;
    }
    return last;
  }

  /** Starts a sweep that drops addresses last seen before horizon; pruneStep carries it on. */
  startPrune(horizon: number): void {
    this.pruneHorizon = horizon;
    this.pruneAt = 1;
  }

  /** Visits up to `entries` addresses of a started sweep; returns true while it has more to do. */
  pruneStep(entries: number): boolean {
    if (this.pruneAt === 0) return false;
    const a = this.arena;
    const end = Math.min(a.entryTop, this.pruneAt + entries);
    let e = this.pruneAt;
    for (; e < end; e++) if (a.kind[e] !== 0 && this.lastSeen(e) < this.pruneHorizon) this.drop(e);
    this.pruneAt = e >= a.entryTop ? 0 : e;
    return this.pruneAt !== 0;
  }

  /** Every address held, as canonical text (benchmarks and tests). */
  addressTexts(): string[] {
    const a = this.arena;
    const out: string[] = [];
    for (let e = 1; e < a.entryTop; e++) {
      if (a.kind[e] === 4) out.push(formatV4(a.key[e]!));
      else if (a.kind[e] === 6) out.push(formatV6(a.slots.subarray(a.key[e]! * W, a.key[e]! * W + 4)));
    }
    return out;
  }

  private makeRoom(nowS: number): void {
    const a = this.arena;
    const fits = () => a.entriesFree >= 1 && a.slotsFree >= RECORD_SLOTS && this.pool.bytes <= this.stringLimit;
    // Set once a strings-only pass found nobody to take (every string shared): then any address goes.
    let anyAddress = false;
    for (;;) {
      if (a.entriesFree < 1) a.growEntries();
      if (a.slotsFree < RECORD_SLOTS) a.growSlots();
      if (fits() || a.live === 0) return;
      if (!this.reached) {
        this.reached = true;
        this.options.onBudgetReached?.();
      }
      const stringsOnly = !anyAddress && this.pool.bytes > this.stringLimit && a.entriesFree >= 1 && a.slotsFree >= RECORD_SLOTS;
      let evicted = stringsOnly ? this.eviction.passNewStrings(nowS, fits, this.dropEntry) : 0;
      if (evicted === 0) evicted = this.eviction.pass(nowS, fits, this.dropEntry, stringsOnly);
      this.evictions += evicted;
      if (stringsOnly && evicted === 0) anyAddress = true;
    }
  }

  /** A reference to s for entry e; a string new to the pool marks e as its holder. */
  private acquire(e: number, s: string): number {
    return this.pool.idOf(s) >= 0 ? this.pool.acquire(s) : this.acquireNew(e, s);
  }

  private acquireNew(e: number, s: string): number {
    this.eviction.noteNewString(e);
    return this.pool.acquire(s);
  }

  /** Frees an address: its slots, the strings they name, its entry. */
  private drop(e: number): void {
    const a = this.arena;
    for (let s = a.head[e]!; s !== 0; ) {
      const o = s * W;
      const next = a.slots[o + NEXT]!;
      const tag = a.slots[o + TAG]!;
      const kind = tag & 7;
      if (kind <= DEVICE) this.pool.release(tag >>> KEY_SHIFT);
      if (kind === DEVICE) this.pool.release(a.slots[o + EXTRA]!);
      if (kind === CRAWL) this.freeExtensions(a.slots[o + COUNT]!);
      a.freeSlotAt(s);
      s = next;
    }
    a.remove(e);
  }

  private freeExtensions(x: number): void {
    while (x !== 0) {
      const next = this.arena.slots[x * W]!;
      this.arena.freeSlotAt(x);
      x = next;
    }
  }

  /** The address's window slot of this kind, made (empty, at the tail) if it has none. */
  private window(e: number, kind: number): number {
    const slots = this.arena.slots;
    let tail = 0;
    for (let s = this.arena.head[e]!; s !== 0; s = slots[s * W + NEXT]!) {
      if ((slots[s * W + TAG]! & 7) === kind) return s;
      tail = s;
    }
    return this.link(e, tail, kind, 0, 0);
  }

  private tail(e: number): number {
    const slots = this.arena.slots;
    let tail = 0;
    for (let s = this.arena.head[e]!; s !== 0; s = slots[s * W + NEXT]!) tail = s;
    return tail;
  }

  /** A new slot on e's chain right after `after` (0: first), tagged. */
  private link(e: number, after: number, kind: number, feed: number, key: number): number {
    const a = this.arena;
    const s = a.allocSlot();
    const slots = a.slots;
    slots[s * W + TAG] = (kind | (feed << 3) | (key << KEY_SHIFT)) >>> 0;
    if (after === 0) {
      slots[s * W + NEXT] = a.head[e]!;
      a.head[e] = s;
    } else {
      slots[s * W + NEXT] = slots[after * W + NEXT]!;
      slots[after * W + NEXT] = s;
    }
    return s;
  }
}
