import type { FeedMessage } from './feed-bus.ts';
import type { FeedDef } from './feed-catalog.ts';
import type { FeedLog } from './feed-log.ts';
import { hourOf } from '../../lib/time.ts';
import type { FeedObserver } from './ingest-service.ts';
import { damaged, noDamage, recordOf, salvage, type LineDamage } from './log-lines.ts';

const BATCH = 5000;
/**
 * A batch is also handed over once its lines reach this many characters: large records (a torrent with thousands of peers) parse to many
 * times their text.
 */
const BATCH_CHARS = 4 * 2 ** 20;

/**
 * Rebuilds in-memory state (domain aggregates, the intelligence index) after a restart by reading
 * back the durable log of the given feeds from `sinceMs` on. Observers get records only: a damaged
 * line (a torn write, with or without a record glued to it, or garbage) gives the whole records it
 * holds and is otherwise passed over, never stopping the replay; each partition with damage is
 * reported to `onDamage`. Returns how many records were replayed.
 */
export async function replayLog(
  log: FeedLog,
  feeds: readonly FeedDef[],
  sinceMs: number,
  observer: FeedObserver,
  onDamage?: (feed: FeedDef, hourStartMs: number, damage: LineDamage) => void,
): Promise<number> {
  let replayed = 0;
  for (const feed of feeds) {
    for (const hour of await log.hours(feed.id)) {
      if (hour < hourOf(sinceMs)) continue;
      const damage = noDamage();
      let batch: FeedMessage[] = [];
      let chars = 0;
      for await (const line of log.readHour(feed.id, hour)) {
        const record = recordOf(line);
        if (record) batch.push({ record, line });
        else if (line !== '') {
          const found = salvage(line);
          damage.skipped += found.skipped;
          damage.repaired += found.records.length;
          batch.push(...found.records);
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
      if (damaged(damage)) onDamage?.(feed, hour, damage);
    }
  }
  return replayed;
}
