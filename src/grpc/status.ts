import { Metadata, type ServiceError } from '@grpc/grpc-js';
import { asAppError, publicDetail, retryAfterSeconds, STATUS } from '../errors.ts';
import type { RateDecision } from '../modules/ratelimit/rate-limiter.ts';

/** RateLimit-* as gRPC metadata entries: the same integers the HTTP headers carry. */
export function rateMetadata(md: Metadata, rate: RateDecision | undefined): Metadata {
  if (rate) {
    md.set('ratelimit-limit', String(rate.limit));
    md.set('ratelimit-remaining', String(rate.remaining));
    md.set('ratelimit-reset', String(rate.resetSeconds));
  }
  return md;
}

export type GrpcFailure = Pick<ServiceError, 'code' | 'details' | 'metadata'>;

/**
 * Any thrown error → a gRPC status through the one STATUS table of errors.ts, so HTTP and gRPC never
 * disagree: the same code row, the same public detail text. `retry-after` (integer seconds) goes into
 * the trailing metadata as the HTTP header would, beside the RateLimit-* entries.
 */
export function toGrpcFailure(err: unknown, rate?: RateDecision): GrpcFailure {
  const app = asAppError(err);
  const metadata = rateMetadata(new Metadata(), rate);
  const retryAfter = retryAfterSeconds(app);
  if (retryAfter !== undefined) metadata.set('retry-after', String(retryAfter));
  return { code: STATUS[app.code].grpc, details: publicDetail(app), metadata };
}
