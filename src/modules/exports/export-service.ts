import { AppError } from '../../errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { FeedDef } from '../feeds/feed-catalog.ts';
import type { CursorCodec } from './cursor-codec.ts';
import type { DownloadSigner } from './download-signer.ts';
import type { ObjectStore } from './object-store.ts';
import type { Snapshot, SnapshotCatalog, SnapshotCursor } from './snapshot-catalog.ts';
import { DAY_MS, dayStartMs, utcDate } from '../../lib/time.ts';
import { parseSnapshotRef, snapshotId } from './snapshot-id.ts';

export const LIST_DEFAULT = 100;
export const LIST_MAX = 500;
/** Presigned download URLs are valid 24 hours. */
export const URL_TTL_S = 24 * 3600;
/** The end of the window in which a daily rollup is being assembled (about 00:00 to 01:30 UTC). */
const ASSEMBLY_END_MS = 90 * 60_000;

export interface ExportItem {
  kind: 'hourly' | 'daily';
  date: string;
  hour?: number;
  id: string;
  size_bytes: number;
  row_count: number;
  checksum: string;
  created_at: number;
  download_path: string;
}

export interface ExportList {
  stream: string;
  feeds: ExportItem[];
  next_cursor?: string;
}

export interface ExportMeta {
  stream: string;
  kind: 'hourly' | 'daily';
  id: string;
  format: 'parquet';
  /** Unix seconds of 00:00 UTC of the snapshot's date. */
  date: number;
  hour?: number;
  created_at: number;
  size: number;
  rows: number;
  checksum: string;
  schema: { fields: Array<{ name: string; type: string }> };
}

/**
 * Where a download's 307 points: `store`, a URL of the object store itself (ObjectStore.presignGet),
 * so the bytes never pass through umbra; `umbra`, umbra's own download route with a DownloadSigner
 * URL, which reads the object from the store (a store that cannot presign, or an operator who wants
 * every download to pass through umbra: one public endpoint, its access log).
 */
export type DownloadVia = 'store' | 'umbra';

export interface ExportDownloads {
  signer: DownloadSigner;
  /** Default `store` when the store can presign, else `umbra`. */
  via?: DownloadVia;
}

/** API path of a feed's export operations, from the host root (`download_path`). */
export const exportPath = (feed: FeedDef, id: string): string => `/api/v4/feeds/${feed.segment}/export/${id}`;

/**
 * The five export operations of the contract (docs/contract.md#feeds) over the snapshot catalog and the object store, with every
 * rule of its States and Feed operations: `latest`, hourly ids, rolled-up hours (400 naming the daily
 * path), hourly metadata only for today, and 404 + Retry-After while a daily rollup is assembled.
 */
export class ExportService {
  /** Where downloads redirect to, decided once. */
  readonly downloadsVia: DownloadVia;

  constructor(
    private readonly catalog: SnapshotCatalog,
    private readonly store: ObjectStore,
    private readonly cursors: CursorCodec,
    private readonly clock: Clock,
    private readonly downloads: ExportDownloads,
  ) {
    if (downloads.via === 'store' && !store.presignGet)
      throw new Error("downloads from the object store need a store that presigns URLs; this one does not (use 'umbra')");
    this.downloadsVia = downloads.via ?? (store.presignGet ? 'store' : 'umbra');
  }

  async list(feed: FeedDef, limit: unknown, cursor: string | undefined): Promise<ExportList> {
    const n = limit === undefined ? LIST_DEFAULT : Number(limit);
    // Worded as the HTTP query schema's check words it (http/problem.ts), so gRPC says the same.
    if (!Number.isInteger(n) || n < 1) throw AppError.field('limit', 'must be an integer of at least 1');
    let before: SnapshotCursor | undefined;
    if (cursor !== undefined) {
      before = this.cursors.decode(feed.id, cursor);
      if (!before) throw AppError.field('cursor', 'is not a cursor this server issued for this feed; start again without it');
    }
    const page = await this.catalog.list(feed.id, { limit: Math.min(n, LIST_MAX), before });
    const out: ExportList = { stream: feed.id, feeds: page.items.map((s) => item(feed, s)) };
    if (page.next) out.next_cursor = this.cursors.encode(feed.id, page.next);
    return out;
  }

  /** The URL a download redirects to: absolute (the store's own) or a path of umbra's download route. */
  async download(feed: FeedDef, date: string, hour?: string): Promise<string> {
    const snap = await this.resolve(feed, date, hour, false);
    // Bound to the checksum either way: the URL never serves other bytes once the key is reused.
    const target = { key: snap.key, sha256: snap.checksum };
    if (this.downloadsVia === 'store' && this.store.presignGet) return this.store.presignGet(target, URL_TTL_S);
    return this.downloads.signer.sign(target, URL_TTL_S);
  }

  async meta(feed: FeedDef, date: string, hour?: string): Promise<ExportMeta> {
    const s = await this.resolve(feed, date, hour, true);
    const m: ExportMeta = {
      stream: feed.id,
      kind: s.kind,
      id: snapshotId(s.date, s.hour),
      format: 'parquet',
      date: dayStartMs(s.date) / 1000,
      created_at: s.createdAt,
      size: s.size,
      rows: s.rows,
      checksum: s.checksum,
      schema: s.schema,
    };
    if (s.hour !== null) m.hour = s.hour;
    return m;
  }

  private async resolve(feed: FeedDef, dateText: string, hourText: string | undefined, forMeta: boolean): Promise<Snapshot> {
    const ref = parseSnapshotRef(dateText, hourText);
    const now = this.clock.now();
    const today = utcDate(now);
    if (ref.hour === undefined) {
      if (ref.date === 'latest') {
        const latest = await this.catalog.latestHourly(feed.id);
        if (!latest) throw new AppError('NOT_FOUND', `No hourly snapshot of ${feed.id} exists yet.`);
        return latest;
      }
      const daily = await this.catalog.get(feed.id, ref.date, null);
      if (daily) return daily;
      throw await this.dailyMissing(feed, ref.date, now);
    }
    const date = ref.date === 'latest' ? today : ref.date;
    const id = snapshotId(date, ref.hour);
    // Hourly metadata only for the current UTC date (the contract's rule).
    if (forMeta && date !== today) {
      throw AppError.field(
        'date',
        `hourly metadata is served only for the current UTC date (${today}); use ${exportPath(feed, date)}/meta for ${date}`,
      );
    }
    const hourly = await this.catalog.get(feed.id, date, ref.hour);
    if (hourly) return hourly;
    const daily = await this.catalog.get(feed.id, date, null);
    if (daily)
      throw AppError.field('hour', `hour ${id} has been rolled up into the daily export: request ${exportPath(feed, date)} instead`);
    throw new AppError('NOT_FOUND', `No snapshot ${id} of ${feed.id} exists.`);
  }

  /** 404, with Retry-After while the date's rollup is (or is about to be) assembled. */
  private async dailyMissing(feed: FeedDef, date: string, now: number): Promise<AppError> {
    const yesterday = utcDate(now - DAY_MS);
    const state = await this.catalog.rollupState(feed.id, date);
    const todayStart = dayStartMs(utcDate(now));
    const inWindow = date === yesterday && now < todayStart + ASSEMBLY_END_MS;
    if (state?.state === 'assembling' || (inWindow && (await this.catalog.hourlyOf(feed.id, date)).length > 0)) {
      const retry = Math.max(60, Math.ceil((todayStart + ASSEMBLY_END_MS - now) / 1000));
      return new AppError(
        'NOT_FOUND',
        `The daily export of ${date} is being assembled; its hours stay downloadable meanwhile (${exportPath(feed, `${date}/0`)} … /23). ` +
          `Retry later.`,
        {
          retryAfter: state?.state === 'assembling' ? 60 : retry,
        },
      );
    }
    return new AppError('NOT_FOUND', `No daily export of ${feed.id} exists for ${date}.`);
  }
}

function item(feed: FeedDef, s: Snapshot): ExportItem {
  const id = snapshotId(s.date, s.hour);
  const i: ExportItem = {
    kind: s.kind,
    date: s.date,
    id,
    size_bytes: s.size,
    row_count: s.rows,
    checksum: s.checksum,
    created_at: s.createdAt,
    download_path: exportPath(feed, id),
  };
  if (s.hour !== null) i.hour = s.hour;
  return i;
}
