import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Readable } from 'node:stream';
import { AppError } from '../../errors.ts';
import { findFeed } from '../../modules/feeds/feed-catalog.ts';
import { csvItems } from '../../modules/feeds/csv-items.ts';
import { ndjsonFromBytes } from '../../modules/feeds/line-splitter.ts';
import type { Services } from '../../services.ts';
import { operatorAuth } from '../operator-auth.ts';

export const INGEST_PATH = '/internal/v1/ingest';

/**
 * POST /internal/v1/ingest/{feed}: operator ingestion for sensors that push. Authenticated by the
 * operator token (never a customer key); the body is streamed (NDJSON, or CSV for flat feeds), so
 * its size is bounded by the per-line limit, not held in memory.
 */
export async function registerIngest(app: FastifyInstance, s: Services, operatorToken: string | undefined): Promise<void> {
  const authorize = operatorAuth(operatorToken, 'Operator ingestion');
  await app.register(async (scope) => {
    // Scoped to this route: /api/v4 routes keep answering 415 to these media types.
    const passStream = (_req: FastifyRequest, payload: Readable, done: (e: Error | null, body?: unknown) => void) => done(null, payload);
    scope.addContentTypeParser(['application/x-ndjson', 'application/jsonl', 'text/csv'], passStream);
    scope.post(`${INGEST_PATH}/*`, { schema: { hide: true } as never }, async (req, reply) => {
      authorize(req);
      const name = (req.params as { '*': string })['*'];
      const feed = findFeed(name);
      if (!feed) throw AppError.field('feed', `unknown feed '${name.slice(0, 64)}'; use a feed id such as proxies or honeypot_http`);
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim();
      if (!(req.body as Readable | undefined)?.pipe) throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the records as Content-Type: application/x-ndjson (or text/csv for flat feeds).');
      if (type === 'text/csv' && !feed.csv) throw new AppError('UNSUPPORTED_MEDIA_TYPE', `The ${feed.id} feed has nested records: send NDJSON.`);
      const body = req.body as Readable;
      const items = type === 'text/csv' ? csvItems(feed, body) : ndjsonFromBytes(body);
      let summary;
      try {
        summary = await s.ingest.ingest(feed, items);
      } catch (e) {
        // The rest of the body was not read: the connection cannot carry another request.
        reply.header('connection', 'close');
        throw e;
      }
      if (summary.accepted === 0 && summary.rejected > 0) {
        const fields: Record<string, string[]> = {};
        for (const e of summary.errors) (fields[`record ${e.record}: ${e.field}`] ??= []).push(e.message);
        throw AppError.validation(fields);
      }
      reply.code(200);
      return summary;
    });
  });
}
