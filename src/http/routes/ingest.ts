import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { AppError } from '../../errors.ts';
import { csvItems } from '../../modules/feeds/csv-items.ts';
import { findFeed } from '../../modules/feeds/feed-catalog.ts';
import { checkIngestKey } from '../../modules/feeds/ingest-keys.ts';
import { ndjsonFromBytes } from '../../modules/feeds/line-splitter.ts';
import type { Services } from '../../services.ts';
import type { IngestSummary } from '../../modules/feeds/ingest-service.ts';

export const INGEST_PATH = '/internal/v1/ingest';
/** Bodies the ingestion route reads as a stream: NDJSON (and its other name), CSV for flat feeds. */
export const INGEST_MEDIA_TYPES = ['application/x-ndjson', 'application/jsonl', 'text/csv'] as const;

/**
 * POST /internal/v1/ingest/{feed}: operator ingestion for sensors that push. The body is streamed
 * (NDJSON, or CSV for flat feeds), so its size is bounded by the per-line limit, not held in memory.
 */
export const ingest =
  (s: Services) =>
  async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const name = (req.params as { '*': string })['*'];
    const feed = findFeed(name);
    if (!feed) throw AppError.field('feed', `unknown feed '${name.slice(0, 64)}'; use a feed id such as proxies or honeypot_http`);
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
    if (!(req.body as Readable | undefined)?.pipe)
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the records as Content-Type: application/x-ndjson (or text/csv for flat feeds).');
    if (type === 'text/csv' && !feed.csv)
      throw new AppError('UNSUPPORTED_MEDIA_TYPE', `The ${feed.id} feed has nested records: send NDJSON.`);
    const key = req.headers['idempotency-key'];
    if (Array.isArray(key)) throw AppError.field('Idempotency-Key', 'must be sent once');
    const keyProblem = key === undefined ? undefined : checkIngestKey(key);
    if (keyProblem) throw AppError.field('Idempotency-Key', keyProblem);
    const body = req.body as Readable;
    const items = type === 'text/csv' ? csvItems(feed, body) : ndjsonFromBytes(body);
    let summary: IngestSummary;
    try {
      summary = await s.ingest.ingest(feed, items, key === undefined ? {} : { idempotencyKey: key });
    } catch (e) {
      // The rest of the body was not read: the connection cannot carry another request.
      reply.header('connection', 'close');
      throw e;
    }
    // A CSV syntax error ends the reading (csv-items.ts): the rest of the body was not read.
    if (!body.readableEnded) reply.header('connection', 'close');
    if (summary.accepted === 0 && summary.rejected > 0) {
      const fields: Record<string, string[]> = {};
      for (const e of summary.errors) (fields[`record ${e.record}: ${e.field}`] ??= []).push(e.message);
      throw AppError.validation(fields);
    }
    // The answer of an earlier request under the key, as the IETF idempotency draft's implementations say it.
    if (summary.replayed) reply.header('idempotent-replayed', 'true');
    reply.code(200);
    return summary;
  };
