import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '../../errors.ts';
import type { DownloadSigner } from '../../modules/exports/download-signer.ts';
import type { ObjectStore } from '../../modules/exports/object-store.ts';

export const DOWNLOAD_PATH = '/downloads';

/**
 * Serves the export downloads umbra signs itself (DownloadSigner), from whatever store holds them: the
 * embedded one, or a remote one when the operator sends downloads through umbra. No API key (clients
 * may not forward it on a redirect), only the URL's signature and expiry. The signature covers the key and
 * the SHA-256 of the bytes the URL was issued for, so a URL without a checksum, or with another one,
 * is refused (403). The key comes out of a verified signature and the store checks its shape, so no
 * request text ever becomes a file path. The object is read as one version (ObjectStore.read) and
 * served only when its checksum is the signed one: once the key holds other bytes (hourly keys are
 * reused daily, a rerun replaces them), 404 and not a byte of them, even when the replacement lands
 * while the request is being answered.
 */
export const download =
  (signer: DownloadSigner, store: ObjectStore) =>
  async (req: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const verified = signer.verify(req.query as Record<string, string | undefined>);
    if (!verified.ok) {
      const why =
        verified.reason === 'EXPIRED'
          ? 'This download URL has expired; request a new one from the export API.'
          : 'This download URL is not valid (tampered with, or not issued by this server).';
      throw new AppError('PERMISSION_DENIED', why);
    }
    const obj = await store.read(verified.key);
    if (!obj || obj.info.sha256 !== verified.sha256) {
      obj?.body.destroy();
      throw new AppError('NOT_FOUND', 'This snapshot no longer exists (rolled up or replaced); list the exports again.');
    }
    const { info, body } = obj;
    reply
      .header('content-type', info.contentType ?? 'application/vnd.apache.parquet')
      .header('content-length', info.size)
      .header('cache-control', 'private, no-store')
      .header('etag', `"${info.sha256}"`)
      .header('content-disposition', `attachment; filename="${verified.key.split('/').pop()}"`);
    return reply.send(body);
  };
