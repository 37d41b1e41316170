import { asAppError, publicDetail, retryAfterSeconds, STATUS } from '../errors.ts';
import type { RateDecision } from '../modules/ratelimit/rate-limiter.ts';
import type { CallFailure, OutgoingMetadata } from './wire-server.ts';

/** RateLimit-* as gRPC metadata entries: the same integers the HTTP headers carry. */
export function rateMetadata(md: OutgoingMetadata, rate: RateDecision | undefined): OutgoingMetadata {
  if (rate) {
    md['ratelimit-limit'] = String(rate.limit);
    md['ratelimit-remaining'] = String(rate.remaining);
    md['ratelimit-reset'] = String(rate.resetSeconds);
  }
  return md;
}

export type GrpcFailure = Required<CallFailure>;

/**
 * Any thrown error → a gRPC status through the one STATUS table of errors.ts, so HTTP and gRPC never
 * disagree: the same code row, the same public detail text. `retry-after` (integer seconds) goes into
 * the trailing metadata as the HTTP header would, beside the RateLimit-* entries.
 */
export function toGrpcFailure(err: unknown, rate?: RateDecision): GrpcFailure {
  const app = asAppError(err);
  const metadata = rateMetadata({}, rate);
  const retryAfter = retryAfterSeconds(app);
  if (retryAfter !== undefined) metadata['retry-after'] = String(retryAfter);
  return { code: STATUS[app.code].grpc, details: publicDetail(app), metadata };
}
