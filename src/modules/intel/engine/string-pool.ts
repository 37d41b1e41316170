/**
 * The strings of the address store (provider|type keys, categories, behaviours, operating systems,
 * device versions), each held once and named by a small integer id. Counted references free a string
 * when the last observation naming it goes, so feed-chosen text (provider tags, User-Agent versions)
 * cannot accumulate once its addresses are evicted or aged out.
 */
export class StringPool {
  private readonly ids = new Map<string, number>();
  private texts: string[] = [];
  /** References per id; -1 marks a permanent string (constants, never freed). */
  private refs = new Int32Array(64);
  /** Per id: weightOf(text), read by the eviction score without touching the string. */
  private weights = new Uint8Array(64);
  private readonly free: number[] = [];
  private held = 0;

  /** weightOf: a number 0..255 the store keeps per string (the risk weight a key carries). */
  constructor(private readonly weightOf: (s: string) => number = () => 0) {}

  /** Approximate bytes of one held string beyond its characters: Map entry, array slot, string header, counts. */
  static readonly OVERHEAD = 96;

  /** The id of s if it is held, else -1. */
  idOf(s: string): number {
    return this.ids.get(s) ?? -1;
  }

  text(id: number): string {
    return this.texts[id]!;
  }

  weight(id: number): number {
    return this.weights[id]!;
  }

  /** Holds s for as long as the program runs (names the rules use). */
  permanent(s: string): number {
    const id = this.add(s);
    this.refs[id] = -1;
    return id;
  }

  /** One more reference to s; returns its id. */
  acquire(s: string): number {
    const id = this.idOf(s);
    if (id < 0) return this.add(s);
    if (this.refs[id]! >= 0) this.refs[id]!++;
    return id;
  }

  /** Whether releasing id once would free its string (permanent strings never are). */
  isLastReference(id: number): boolean {
    return this.refs[id] === 1;
  }

  /** One more reference to a held id. */
  retain(id: number): void {
    if (this.refs[id]! >= 0) this.refs[id]!++;
  }

  release(id: number): void {
    const r = this.refs[id]!;
    if (r < 0) return;
    if (r > 1) {
      this.refs[id] = r - 1;
      return;
    }
    const s = this.texts[id]!;
    this.ids.delete(s);
    this.held -= StringPool.OVERHEAD + 2 * s.length;
    this.texts[id] = '';
    this.refs[id] = 0;
    this.free.push(id);
  }

  /** Estimated heap bytes of the strings held (UTF-16 upper bound for the characters). */
  get bytes(): number {
    return this.held + 5 * this.refs.length + 8 * this.texts.length;
  }

  get size(): number {
    return this.ids.size;
  }

  private add(s: string): number {
    let id = this.free.pop();
    if (id === undefined) {
      id = this.texts.length;
      this.texts.push('');
      if (id >= this.refs.length) {
        const grown = new Int32Array(this.refs.length * 2);
        grown.set(this.refs);
        this.refs = grown;
        const weights = new Uint8Array(grown.length);
        weights.set(this.weights);
        this.weights = weights;
      }
    }
    this.texts[id] = s;
    this.weights[id] = this.weightOf(s);
    this.refs[id] = 1;
    this.ids.set(s, id);
    this.held += StringPool.OVERHEAD + 2 * s.length;
    return id;
  }
}
