export { UmbraClient, DEFAULT_BASE_URL, type UmbraClientOptions, type Answer, type RetryInfo, type RequestSpec } from './client.js';
export {
  UmbraError,
  UmbraApiError,
  ValidationError,
  AuthenticationError,
  InsufficientCreditsError,
  PermissionDeniedError,
  NotFoundError,
  RateLimitError,
  ServerError,
  ConnectionError,
  IntegrityError,
  type RateLimit,
} from './errors.js';
export { LookupManyError, canonicalIp, type LookupManyOptions, type LookupManyResult, type BatchReport } from './batch.js';
export type { StreamOptions, ReconnectInfo } from './stream.js';
export type { DownloadOptions, DownloadResult } from './download.js';
export { FEEDS, isFeedId, type FeedId, type FeedRecord, type SnapshotPage, type SnapshotItem, type SnapshotMeta } from './feeds.js';
export { systemClock, backoffDelay, retryPolicy, RETRYABLE_STATUS, type Clock, type RetryOptions, type RetryPolicy } from './retry.js';
export type * from './types.js';
