import type { FeedId } from '../feeds/feed-catalog.ts';

export const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a time, UTC. */
export const utcDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
export const dayStartMs = (date: string): number => Date.parse(`${date}T00:00:00Z`);
export const utcHour = (ms: number): number => new Date(ms).getUTCHours();

/** decisions.md storage keys. Hourly keys repeat daily: the `latest` location holds at most 24 files. */
export const hourlyKey = (feed: FeedId, hourStartMs: number): string => `${feed}/latest/${String(utcHour(hourStartMs)).padStart(2, '0')}_${feed}.parquet`;
export const dailyKey = (feed: FeedId, date: string): string => `${feed}/${date.slice(0, 4)}/${date.slice(5, 7)}/${date.slice(8, 10)}/${feed}.parquet`;
