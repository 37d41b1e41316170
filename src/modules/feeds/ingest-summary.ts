import type { FeedId } from './feed-catalog.ts';
import type { RejectReason } from './feed-records.ts';

export interface RecordError {
  /** 1-based record (line) number in the input. */
  record: number;
  field: string;
  message: string;
  reason: RejectReason;
}

/** The answer of an ingest (HTTP and `umbra ingest`), snake_case like the rest of the API. */
export interface IngestSummary {
  feed: FeedId;
  accepted: number;
  rejected: number;
  by_reason: Partial<Record<RejectReason, number>>;
  /** The first MAX_ERRORS errors, each naming the record and the field. */
  errors: RecordError[];
  /** True when this is the answer of an earlier ingest under the same idempotency key (nothing was stored now). */
  replayed?: boolean;
}
