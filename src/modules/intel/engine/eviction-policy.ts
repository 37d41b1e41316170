import { COUNT, EXTRA, FIRST, KEY_SHIFT, LAST, NEXT, SLOT_WORDS as W, TAG, type AddressArena } from './address-arena.ts';
import { DEVICE } from './address-facts.ts';
import type { StringPool } from './string-pool.ts';

/** Entries evicted per pass (amortises the threshold sample) and entries a pass may score. */
const EVICT_BATCH = 128;
const SCAN_LIMIT = 4_096;
const SAMPLE = 256;
/** The threshold's usual quantile: a pass evicts from the lowest sixteenth of scores. */
const MIN_QUANTILE = 1 / 16;
/** Entries that brought a string into the pool, most recent last: where to look when strings overflow. */
const NEW_STRING_HOLDERS = 4_096;
/** Risk-score recency: 0.5^(age / 30 days) = exp(-age × DECAY). */
const DECAY = Math.LN2 / (30 * 86_400);
/** The risk score's volume term, min(15, 5·log10(1 + n)), for n below 1,000 (where it reaches 15). */
const VOLUME = Float64Array.from({ length: 1000 }, (_, n) => 5 * Math.log10(1 + n));

/**
 * Which addresses the store evicts when a record would not fit: the least informative first, by
 *
 *   score = (w + 1) × 0.5^(age / 30 days) + min(15, 5·log10(1 + n))
 *
 * where w is the strongest risk weight among the address's categories and behaviours (0 for devices
 * only), age the time since it was last seen and n its observations: the risk score's own terms
 * (docs/intelligence.md), so a torrent peer seen once goes before a proxy, and of two alike the one
 * seen longer ago goes first. Eviction works in passes over a cursor through the entries: a random
 * sample of SAMPLE addresses sets a threshold at the lowest sixteenth of scores, and the pass evicts
 * addresses at or below it until EVICT_BATCH are gone, scoring at most SCAN_LIMIT (a millisecond or
 * so). The order is approximate: a pass takes what it meets below the threshold, not the
 * very lowest first. When it is the strings that are over their share (feed-chosen text: distinct
 * provider tags, User-Agent versions), a pass considers only addresses holding the last reference
 * to one, since evicting any other frees nothing.
 */
export class EvictionPolicy {
  private readonly sample = new Float64Array(SAMPLE);
  private hand = 1;
  private quantile = MIN_QUANTILE;
  private rng: number;
  /** This pass takes only addresses whose eviction frees a string (the strings are over their share). */
  private onlyFreeing = false;
  private readonly holders = new Uint32Array(NEW_STRING_HOLDERS);
  private holdersAt = 0;
  private readonly holderScores = new Float64Array(NEW_STRING_HOLDERS);
  private readonly holderOrder = new Uint32Array(NEW_STRING_HOLDERS);

  constructor(
    private readonly arena: AddressArena,
    private readonly pool: StringPool,
    seed: number,
  ) {
    this.rng = seed | 1;
  }

  /** Eviction score: lower goes first. */
  score(e: number, nowS: number): number {
    const slots = this.arena.slots;
    let w = 0;
    let n = 0;
    let last = 0;
    for (let s = this.arena.head[e]!; s !== 0; s = slots[s * W + NEXT]!) {
      const o = s * W;
      const tag = slots[o + TAG]!;
      const kind = tag & 7;
      if (kind <= DEVICE) {
        if (kind !== DEVICE) w = Math.max(w, this.pool.weight(tag >>> KEY_SHIFT));
        n += slots[o + COUNT]!;
        if (slots[o + LAST]! > last) last = slots[o + LAST]!;
      } else if (slots[o + FIRST]! > last) last = slots[o + FIRST]!;
    }
    const age = nowS > last ? nowS - last : 0;
    return (w + 1) * Math.exp(-age * DECAY) + (n < 1000 ? VOLUME[n]! : 15);
  }

  /**
   * One pass (see the class comment): scores at most SCAN_LIMIT addresses from the cursor on and
   * drops those at or below the threshold, until EVICT_BATCH are gone and `fits` says the record
   * fits. A pass that falls short raises the quantile for the next (the store runs another while the
   * record does not fit); one that finds its batch early lowers it again. Returns how many it dropped.
   */
  pass(nowS: number, fits: () => boolean, drop: (e: number) => void, mustFreeStrings: boolean): number {
    const a = this.arena;
    const only = (this.onlyFreeing = mustFreeStrings);
    const theta = this.quantile >= 1 ? Infinity : this.threshold(nowS, this.quantile);
    let evicted = 0;
    let scanned = 0;
    while (scanned < SCAN_LIMIT && a.live > 0) {
      const e = this.hand;
      this.hand = e + 1 < a.entryTop ? e + 1 : 1;
      if (a.kind[e] === 0) continue;
      scanned++;
      if ((only && !this.freesString(e)) || this.score(e, nowS) > theta) continue;
      drop(e);
      if (++evicted >= EVICT_BATCH && fits()) break;
    }
    if (evicted < EVICT_BATCH) this.quantile = Math.min(1, this.quantile * 2);
    else if (scanned < SCAN_LIMIT / 2) this.quantile = Math.max(MIN_QUANTILE, this.quantile / 2);
    return evicted;
  }

  /** Entry e brought a new string into the pool (a ring: the oldest notes are overwritten). */
  noteNewString(e: number): void {
    this.holders[this.holdersAt] = e;
    this.holdersAt = (this.holdersAt + 1) % NEW_STRING_HOLDERS;
  }

  /**
   * When the strings are over their share, new strings are what put them there: of the addresses
   * that brought the last NEW_STRING_HOLDERS in and still hold a string alone, the least informative
   * go first, until the record fits (at most EVICT_BATCH). Returns how many went; 0 when none of them
   * frees a string any more (the caller then scans).
   */
  passNewStrings(nowS: number, fits: () => boolean, drop: (e: number) => void): number {
    const a = this.arena;
    let n = 0;
    for (let i = 0; i < NEW_STRING_HOLDERS; i++) {
      const e = this.holders[i]!;
      if (e === 0 || e >= a.entryTop || a.kind[e] === 0 || !this.freesString(e)) continue;
      this.holderScores[n] = this.score(e, nowS);
      this.holderOrder[n++] = e;
    }
    const order = Array.from(this.holderOrder.subarray(0, n).keys()).sort((x, y) => this.holderScores[x]! - this.holderScores[y]!);
    let evicted = 0;
    for (const k of order) {
      const e = this.holderOrder[k]!;
      // The same entry may be noted more than once, and an earlier drop may have freed its strings.
      if (a.kind[e] === 0 || !this.freesString(e)) continue;
      drop(e);
      if (++evicted >= EVICT_BATCH || fits()) break;
    }
    return evicted;
  }

  /** Whether evicting e frees a string: it holds the last reference to a key or a device version. */
  private freesString(e: number): boolean {
    const slots = this.arena.slots;
    for (let s = this.arena.head[e]!; s !== 0; s = slots[s * W + NEXT]!) {
      const o = s * W;
      const tag = slots[o + TAG]!;
      const kind = tag & 7;
      if (kind > DEVICE) continue;
      if (this.pool.isLastReference(tag >>> KEY_SHIFT) || (kind === DEVICE && this.pool.isLastReference(slots[o + EXTRA]!))) return true;
    }
    return false;
  }

  /** The q-quantile of the scores of a random sample of addresses. */
  private threshold(nowS: number, q: number): number {
    const a = this.arena;
    let n = 0;
    for (let tries = 0; n < SAMPLE && tries < 4 * SAMPLE; tries++) {
      this.rng ^= this.rng << 13;
      this.rng ^= this.rng >>> 17;
      this.rng ^= this.rng << 5;
      const e = 1 + ((this.rng >>> 0) % (a.entryTop - 1));
      if (a.kind[e] !== 0 && (!this.onlyFreeing || this.freesString(e))) this.sample[n++] = this.score(e, nowS);
    }
    if (n === 0) return Infinity;
    const sorted = this.sample.subarray(0, n).sort();
    return sorted[Math.floor(q * n)]!;
  }
}
