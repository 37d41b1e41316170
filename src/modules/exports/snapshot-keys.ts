import type { FeedId } from '../feeds/feed-catalog.ts';

import { utcHour } from '../../lib/time.ts';

/** The contract's storage keys. Hourly keys repeat daily: the `latest` location holds at most 24 files. */
export const hourlyKey = (feed: FeedId, hourStartMs: number): string =>
  `${feed}/latest/${String(utcHour(hourStartMs)).padStart(2, '0')}_${feed}.parquet`;
export const dailyKey = (feed: FeedId, date: string): string =>
  `${feed}/${date.slice(0, 4)}/${date.slice(5, 7)}/${date.slice(8, 10)}/${feed}.parquet`;
