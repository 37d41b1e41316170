import type { FastifyRequest } from 'fastify';
import type { ManualJobRequest } from '../../modules/exports/manual-jobs.ts';
import { snapshotId } from '../../modules/exports/snapshot-id.ts';
import type { Services } from '../../services.ts';

export const EXPORT_JOBS_PATH = '/internal/v1/exports/run';

export const EXPORT_JOBS_BODY = {
  type: 'object',
  required: ['job'],
  additionalProperties: false,
  properties: {
    job: { type: 'string', enum: ['hourly', 'rollup'] },
    feed: { type: 'string', maxLength: 64 },
    date: { type: 'string', maxLength: 10 },
    hour: { type: 'integer', minimum: 0, maximum: 23 },
  },
} as const;

/**
 * POST /internal/v1/exports/run: runs an export job now in the server that owns the data dir, one at a
 * time with its scheduled jobs. `umbra exports run-hourly|rollup` sends here while a server runs, so
 * no second process ever writes the exports.
 */
export const exportJobs =
  (s: Services) =>
  async (req: FastifyRequest): Promise<unknown> => {
    const done = await s.runExportJob(req.body as ManualJobRequest);
    return {
      snapshots: done.map((x) => ({
        feed: x.feed,
        id: snapshotId(x.date, x.hour),
        kind: x.kind,
        rows: x.rows,
        size: x.size,
        checksum: x.checksum,
      })),
    };
  };
