import type { FeedId } from '../feeds/feed-catalog.ts';
import type { FeedLog } from '../feeds/feed-log.ts';
import type { DatasetInfo } from '../lookup/ip-dataset.ts';
import { dataVersion } from '../lookup/data-version.ts';
import type { IntelIndexStats } from './engine/intel-index.ts';
import type { IntelList } from './lists/intel-list.ts';
import type { Overlay } from './overlays/overlay-store.ts';

/** `umbra data status` and the operator endpoint: what the lookups' data is made of, with versions and counts. */
export interface DataStatus {
  /** The X-Data-Version value lookups carry. */
  data_version: string;
  dataset: DatasetInfo & { file?: string; bytes?: number };
  lists: Array<Omit<IntelList, 'cidrs'> & { cidrs: number }>;
  overlays: { teams: number; entries: number };
  feeds: Array<{
    feed: FeedId;
    hours: number;
    oldest_hour: string | null;
    newest_hour: string | null;
    /** True when the newest hour holds records umbra's demo simulator made up (`simulated: true`). */
    simulated: boolean;
  }>;
  /** Only from a running server: the live index built from the feeds, and its memory budget. */
  intelligence?: IntelIndexStats;
}

/** Lines of the newest hour read to tell whether the demo simulator wrote into a feed: a demo writes every few seconds. */
const SIMULATED_SCAN_LINES = 10_000;
const SIMULATED_MEMBER = '"simulated":true';

async function holdsSimulated(log: Pick<FeedLog, 'readHour'>, feed: FeedId, hourMs: number): Promise<boolean> {
  let n = 0;
  for await (const line of log.readHour(feed, hourMs)) {
    // Stored lines are canonical JSON (JSON.stringify), so the member is spelled exactly so.
    if (line.includes(SIMULATED_MEMBER)) return true;
    if (++n >= SIMULATED_SCAN_LINES) break;
  }
  return false;
}

const hourText = (ms: number) => `${new Date(ms).toISOString().slice(0, 13)}:00Z`;

/** Composes the status from the dataset's header and the stores (lists, overlays, feed log hours). */
export async function dataStatus(
  dataset: DatasetInfo & { file?: string; bytes?: number },
  stores: { lists: { all(): Promise<IntelList[]> }; overlays: { all(): Promise<Overlay[]> }; feedLog: Pick<FeedLog, 'hours' | 'readHour'> },
  feeds: readonly FeedId[],
): Promise<DataStatus> {
  const [lists, overlays] = await Promise.all([stores.lists.all(), stores.overlays.all()]);
  const feedHours = await Promise.all(
    feeds.map(async (feed) => {
      const hours = await stores.feedLog.hours(feed);
      return {
        feed,
        hours: hours.length,
        oldest_hour: hours.length ? hourText(hours[0]!) : null,
        newest_hour: hours.length ? hourText(hours[hours.length - 1]!) : null,
        simulated: hours.length > 0 && (await holdsSimulated(stores.feedLog, feed, hours[hours.length - 1]!)),
      };
    }),
  );
  return {
    data_version: dataVersion(dataset, lists).header,
    dataset,
    lists: lists
      .map(({ cidrs, ...l }) => ({ ...l, cidrs: cidrs.length }))
      .sort((a, b) => a.kind.localeCompare(b.kind) || a.provider.localeCompare(b.provider)),
    overlays: { teams: new Set(overlays.map((o) => o.org_id)).size, entries: overlays.length },
    feeds: feedHours,
  };
}
