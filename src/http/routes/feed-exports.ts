import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Static, Type } from 'typebox';
import { absoluteUrl, httpBase } from '../../lib/public-url.ts';
import type { FeedDef } from '../../modules/feeds/feed-catalog.ts';
import { FEED_EXPORT_OPERATIONS } from '../../operations.ts';
import { LIST_DEFAULT, LIST_MAX } from '../../modules/exports/export-service.ts';
import type { Services } from '../../services.ts';
import type { RouteSpec } from '../route-spec.ts';
import { errorResponses } from '../schemas.ts';

// Path segments are validated by the export service so every bad form gets its own message.
const Date_ = Type.String({ maxLength: 32, description: "UTC date 'YYYY-MM-DD' or 'latest'" });
const Hour = Type.String({ maxLength: 8, description: 'UTC hour 0..23, padded or not' });
const ListQuery = Type.Object({
  limit: Type.Optional(
    Type.Integer({
      minimum: 1,
      default: LIST_DEFAULT,
      description: `snapshots per page, at least 1; values above ${LIST_MAX} are clamped to ${LIST_MAX}`,
    }),
  ),
  cursor: Type.Optional(Type.String({ maxLength: 512, description: 'next_cursor of the previous page' })),
});

const Item = Type.Object({
  kind: Type.String({ description: 'hourly or daily' }),
  date: Type.String(),
  hour: Type.Optional(Type.Integer()),
  id: Type.String({ description: 'a snapshot id: YYYY-MM-DD or YYYY-MM-DD/H' }),
  size_bytes: Type.Integer(),
  row_count: Type.Integer(),
  checksum: Type.String(),
  created_at: Type.Integer(),
  download_path: Type.String(),
});
const ExportList = Type.Object({ stream: Type.String(), feeds: Type.Array(Item), next_cursor: Type.Optional(Type.String()) });
const ExportMeta = Type.Object({
  stream: Type.String(),
  kind: Type.String(),
  id: Type.String(),
  format: Type.Literal('parquet'),
  date: Type.Integer({ description: 'Unix seconds of 00:00 UTC of the date' }),
  hour: Type.Optional(Type.Integer()),
  created_at: Type.Integer(),
  size: Type.Integer(),
  rows: Type.Integer(),
  checksum: Type.String({ description: 'lower-case hex SHA-256 of exactly the bytes the download serves' }),
  schema: Type.Object({ fields: Type.Array(Type.Object({ name: Type.String(), type: Type.String() })) }),
});
const Redirect = {
  307: {
    description:
      'A redirect to the snapshot: follow Location, an absolute download URL valid 24 hours that needs no API key (clients must not send it).',
    type: 'null',
    headers: {
      Location: { type: 'string', format: 'uri', description: 'the absolute signed download URL of the snapshot, valid 24 hours' },
      'Cache-Control': { type: 'string', const: 'private, no-store', description: 'the URL is minted per request: never cached' },
    },
  },
};

const DayParams = Type.Object({ date: Date_ });
const HourParams = Type.Object({ date: Date_, hour: Hour });

/** The five export routes of one feed, all through the same export service. `publicUrl`: UMBRA_PUBLIC_URL. */
export function feedExports(s: Services, feed: FeedDef, publicUrl: string | undefined): RouteSpec[] {
  const ops = FEED_EXPORT_OPERATIONS[feed.id];
  const redirect = (req: FastifyRequest, reply: FastifyReply, url: string): FastifyReply => {
    // umbra's own download URLs are paths; Location is absolute, on the base that reaches this server
    // (lib/public-url.ts). An object store's presigned URL is absolute already and passes unchanged.
    const base = httpBase({
      publicUrl,
      scheme: req.protocol,
      host: req.headers.host,
      local: { address: req.socket?.localAddress, port: req.socket?.localPort },
    });
    // Minted per request and tied to no key: never cacheable by intermediaries.
    return reply.code(307).header('location', absoluteUrl(base, url)).header('cache-control', 'private, no-store').send();
  };
  const errors = errorResponses([400, 401, 403, 404, 429, 503]);
  return [
    {
      operation: ops.list,
      schema: { querystring: ListQuery, response: { 200: ExportList, ...errors } },
      handler: async (req: FastifyRequest<{ Querystring: Static<typeof ListQuery> }>) =>
        s.exports.list(feed, req.query.limit, req.query.cursor),
    },
    {
      operation: ops.download,
      schema: { params: DayParams, response: { ...Redirect, ...errors } },
      handler: async (req: FastifyRequest<{ Params: Static<typeof DayParams> }>, reply) =>
        redirect(req, reply, await s.exports.download(feed, req.params.date)),
    },
    {
      operation: ops.meta,
      schema: { params: DayParams, response: { 200: ExportMeta, ...errors } },
      handler: async (req: FastifyRequest<{ Params: Static<typeof DayParams> }>) => s.exports.meta(feed, req.params.date),
    },
    {
      operation: ops.hourDownload,
      schema: { params: HourParams, response: { ...Redirect, ...errors } },
      handler: async (req: FastifyRequest<{ Params: Static<typeof HourParams> }>, reply) =>
        redirect(req, reply, await s.exports.download(feed, req.params.date, req.params.hour)),
    },
    {
      operation: ops.hourMeta,
      schema: { params: HourParams, response: { 200: ExportMeta, ...errors } },
      handler: async (req: FastifyRequest<{ Params: Static<typeof HourParams> }>) => s.exports.meta(feed, req.params.date, req.params.hour),
    },
  ];
}
