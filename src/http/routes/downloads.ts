import type { FastifyInstance } from 'fastify';
import { AppError } from '../../errors.ts';
import type { ObjectStore } from '../../modules/exports/object-store.ts';

export const DOWNLOAD_PATH = '/downloads';

/**
 * Serves presigned export downloads from the embedded object store: no API key (clients may not
 * forward it on a redirect), only the URL's signature and expiry. The key comes out of a verified
 * signature and the store checks its shape, so no request text ever becomes a file path. When the URL
 * names a checksum and the object at the key was since replaced (hourly keys repeat daily), 404.
 */
export function registerDownloads(app: FastifyInstance, store: ObjectStore): void {
  app.get(DOWNLOAD_PATH, { schema: { hide: true } as never }, async (req, reply) => {
    const query = req.query as Record<string, string | undefined>;
    const verified = store.verify(query);
    if (!verified.ok) {
      const why = verified.reason === 'EXPIRED' ? 'This download URL has expired; request a new one from the export API.' : 'This download URL is not valid (tampered with, or not issued by this server).';
      throw new AppError('PERMISSION_DENIED', why);
    }
    const info = await store.head(verified.key);
    if (!info || (query.sha256 !== undefined && query.sha256 !== info.sha256)) {
      throw new AppError('NOT_FOUND', 'This snapshot no longer exists (rolled up or replaced); list the exports again.');
    }
    const body = await store.get(verified.key);
    if (!body) throw new AppError('NOT_FOUND', 'This snapshot no longer exists; list the exports again.');
    reply
      .header('content-type', info.contentType ?? 'application/vnd.apache.parquet')
      .header('content-length', info.size)
      .header('cache-control', 'private, no-store')
      .header('etag', `"${info.sha256}"`)
      .header('content-disposition', `attachment; filename="${verified.key.split('/').pop()}"`);
    return reply.send(body);
  });
}
