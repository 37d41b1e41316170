import type { Logger } from 'pino';
import { redactUrl } from '../lib/redact-url.ts';
import type { Metrics } from '../metrics.ts';

/**
 * Records one answered request: operation is the operations.ts id ('unmatched' for 404s, 'other' for
 * routes outside the registry), ms the time from arrival to the end of the response.
 */
export type RecordResponse = (reqId: string, operation: string, method: string, url: string, status: number, ms: number) => void;

/**
 * The metrics and the one access-log line of a request. fastify's onResponse hook and the fast path
 * both call it, so the two can never count or log differently.
 */
export function responseRecorder(metrics: Metrics, logger: Logger): RecordResponse {
  const logRequests = logger.isLevelEnabled('info');
  return (reqId, operation, method, url, status, ms) => {
    metrics.observe(operation, status, ms / 1000);
    // One line per request; the key header is never logged (only method, path, status, timing), nor the
    // value of a signature-like query member: a presigned download URL is a credential for 24 hours.
    // The root logger with the id spelled out writes the same line as req.log, without a child logger.
    if (logRequests) logger.info({ reqId, operation, method, url: redactUrl(url), status, ms: Math.round(ms * 100) / 100 }, 'request');
  };
}
