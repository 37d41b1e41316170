/**
 * Reading feed log lines that may be damaged. The log's lines are canonical JSON records, one per
 * line, but a partition can hold damage the writer never meant to leave: a torn line (a crash
 * mid-append, never acknowledged) that an older version did not cut before appending, so the next,
 * acknowledged record is glued to it on the same line; or any bytes disk corruption left. Readers
 * (exports, start-up replay) must keep every record that is still whole and pass over the rest
 * instead of failing on the partition forever.
 */

/** What a reader met in one partition. */
export interface LineDamage {
  /** Pieces of damaged lines that held no whole record (a torn write, garbage), left out. */
  skipped: number;
  /** Whole records read out of damaged lines (a record glued to a torn write). */
  repaired: number;
}

export const noDamage = (): LineDamage => ({ skipped: 0, repaired: 0 });
export const damaged = (d: LineDamage): boolean => d.skipped > 0 || d.repaired > 0;

export type LogRecord = Record<string, unknown> & { timestamp: number };

/** A record as the log writes it: a JSON object with a numeric timestamp (every feed has one). */
function parseRecord(text: string): LogRecord | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  return v !== null && typeof v === 'object' && !Array.isArray(v) && typeof (v as LogRecord).timestamp === 'number'
    ? (v as LogRecord)
    : undefined;
}

/** One line: the record, or undefined when the line is not one whole record (then see salvage). */
export const recordOf = (line: string): LogRecord | undefined => parseRecord(line);

/**
 * End (exclusive) of the JSON value opened by the `{` at `from`, skipping strings; -1 when it does
 * not close before `limit`. Only brackets are counted: JSON.parse then decides whether it is a record.
 */
function objectEnd(text: string, from: number, limit: number): number {
  let depth = 0;
  for (let i = from; i < limit; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: a backslash escapes the next character, a quote ends it.
      for (i++; i < limit; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c) i++;
        else if (d === 0x22) break;
      }
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if ((c === 0x7d || c === 0x5d) && --depth === 0) return i + 1;
  }
  return -1;
}

/**
 * Bounds the characters scanned in one damaged line, as a multiple of its length: a start that does
 * not close scans to the end of the line, and garbage can hold many starts. Past it, the rest of the
 * line is skipped.
 */
const SCAN_BUDGET = 16;

/**
 * The whole records in a damaged line, in order, and how many pieces held none. A record's
 * canonical JSON starts with `{"` and contains no `{"` inside a string (a quote in a string is
 * escaped), so each place `{"` appears is tried as the start of a record, from the left: the object
 * opened there, up to its matching bracket, is kept when it parses as a record, and the search goes
 * on after it; otherwise on from the next `{"`. What lies between kept records is skipped.
 */
export function salvage(line: string): { records: Array<{ record: LogRecord; line: string }>; skipped: number } {
  const records: Array<{ record: LogRecord; line: string }> = [];
  let skipped = 0;
  let kept = 0; // end of the last record kept
  let budget = SCAN_BUDGET * line.length;
  for (let at = line.indexOf('{"'); at !== -1 && budget > 0; ) {
    const limit = Math.min(line.length, at + budget);
    const end = objectEnd(line, at, limit);
    budget -= (end === -1 ? limit : end) - at;
    const text = end === -1 ? undefined : line.slice(at, end);
    const record = text === undefined ? undefined : parseRecord(text);
    if (record) {
      if (at > kept) skipped++;
      records.push({ record, line: text! });
      kept = end;
      at = line.indexOf('{"', end);
    } else {
      at = line.indexOf('{"', at + 1);
    }
  }
  if (line.length > kept) skipped++;
  return { records, skipped };
}

/**
 * Blocks of log lines (FeedLog.readHourBlocks) with damaged lines replaced by the whole records
 * they hold, counted in `damage`. Every line is parsed, so this is for when a bulk reader refused
 * the partition, not for every read. Blocks without damage pass through as they are.
 */
export async function* validBlocks(blocks: AsyncIterable<string>, damage: LineDamage): AsyncIterable<string> {
  for await (const block of blocks) {
    const lines = block.split('\n');
    let bad = lines.findIndex((l) => recordOf(l) === undefined);
    if (bad === -1) {
      yield block;
      continue;
    }
    const out = lines.slice(0, bad);
    for (; bad < lines.length; bad++) {
      const line = lines[bad]!;
      if (recordOf(line)) {
        out.push(line);
        continue;
      }
      if (line === '') continue;
      const found = salvage(line);
      damage.skipped += found.skipped;
      damage.repaired += found.records.length;
      for (const r of found.records) out.push(r.line);
    }
    if (out.length > 0) yield out.join('\n');
  }
}
