import type { FeedMessage } from './feed-bus.ts';
import type { FeedDef } from './feed-catalog.ts';
import { hourOf, type FeedLog } from './feed-log.ts';
import type { FeedObserver } from './ingest-service.ts';

const BATCH = 5000;
/** A batch is also handed over once its lines reach this many characters: large records (a torrent with thousands of peers) parse to many times their text. */
const BATCH_CHARS = 4 * 2 ** 20;

/**
 * Rebuilds in-memory state (domain aggregates, the intelligence index) after a restart by
 * reading back the durable log of the given feeds from `sinceMs` on. Lines that do not parse (a torn
 * write) are skipped. Returns how many records were replayed.
 */
export async function replayLog(log: FeedLog, feeds: readonly FeedDef[], sinceMs: number, observer: FeedObserver): Promise<number> {
  let replayed = 0;
  for (const feed of feeds) {
    for (const hour of await log.hours(feed.id)) {
      if (hour < hourOf(sinceMs)) continue;
      let batch: FeedMessage[] = [];
      let chars = 0;
      for await (const line of log.readHour(feed.id, hour)) {
        try {
          batch.push({ record: JSON.parse(line), line });
        } catch {
          continue;
        }
        chars += line.length;
        if (batch.length >= BATCH || chars >= BATCH_CHARS) {
          observer(feed, batch);
          replayed += batch.length;
          batch = [];
          chars = 0;
        }
      }
      observer(feed, batch);
      replayed += batch.length;
    }
  }
  return replayed;
}
