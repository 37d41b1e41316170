import { AppError } from '../errors.ts';
import type { AddressAllowList } from '../lib/address-allow-list.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema } from 'fastify';
import type { Readable } from 'node:stream';
import type { DownloadSigner } from '../modules/exports/download-signer.ts';
import type { ObjectStore } from '../modules/exports/object-store.ts';
import { OPERATIONS, API_PREFIX, type Operation } from '../operations.ts';
import type { Metrics } from '../metrics.ts';
import type { Services } from '../services.ts';
import { operatorAuth } from './operator-auth.ts';
import { dataStatus, DATA_STATUS_PATH } from './routes/data-status.ts';
import { download, DOWNLOAD_PATH } from './routes/downloads.ts';
import { EXPORT_JOBS_BODY, exportJobs, EXPORT_JOBS_PATH } from './routes/export-jobs.ts';
import { ingest, INGEST_MEDIA_TYPES, INGEST_PATH } from './routes/ingest.ts';
import { PROTO_PATH, REFERENCE_PATH, type ReferenceHandlers } from './routes/reference.ts';

/** Who may call a route outside the API's operations table. */
export type Access =
  /** The operator token as a Bearer token (never a customer key). */
  | 'operator'
  /** Anyone: probes, the API document. */
  | 'public'
  /** Clients whose address is in UMBRA_ADMIN_ALLOW (the machine itself by default): metrics. */
  | 'admin-network'
  /** Whoever holds a URL this server signed (downloads; checked by the route). */
  | 'signed-url';

/** One HTTP route outside the /api/v4 operations of src/operations.ts. */
export interface InternalRoute {
  method: 'GET' | 'POST';
  path: string;
  access: Access;
  summary: string;
  /** Media types read as a raw stream (the ingestion body) rather than parsed, for this route alone. */
  rawBodies?: readonly string[];
  /** An operations.ts row the route answers for (the health probe at the root). */
  operation?: Operation;
  schema?: FastifySchema;
  handler: (req: FastifyRequest, reply: FastifyReply) => unknown;
}

export interface InternalRouteDeps {
  services: Services;
  metrics: Metrics;
  objects: ObjectStore;
  /** Checks the URLs of the download route. */
  downloads: DownloadSigner;
  openapi: () => unknown;
  /** The API reference page and the .proto files it links. */
  reference: ReferenceHandlers;
  health: (req: FastifyRequest, reply: FastifyReply) => unknown;
}

/** Every route umbra serves besides the operations table, in one place. */
export const internalRoutes = (d: InternalRouteDeps): InternalRoute[] => [
  {
    method: 'GET',
    path: '/health',
    access: 'public',
    summary: 'The health probe at the root, for load balancers',
    operation: OPERATIONS.health,
    handler: d.health,
  },
  {
    method: 'GET',
    path: '/metrics',
    access: 'admin-network',
    summary: 'Prometheus metrics',
    handler: async (_req, reply) => {
      reply.type(d.metrics.registry.contentType);
      return d.metrics.registry.metrics();
    },
  },
  {
    method: 'GET',
    path: `${API_PREFIX}/openapi.json`,
    access: 'public',
    summary: 'The OpenAPI document',
    handler: async () => d.openapi(),
  },
  // The reference page answers with and without the trailing slash (@fastify/swagger-ui, which it
  // replaced, redirected one to the other; bookmarks of both exist).
  { method: 'GET', path: REFERENCE_PATH, access: 'public', summary: 'The API reference page', handler: d.reference.page },
  { method: 'GET', path: `${REFERENCE_PATH}/`, access: 'public', summary: 'The API reference page', handler: d.reference.page },
  { method: 'GET', path: `${PROTO_PATH}/*`, access: 'public', summary: 'The gRPC .proto files', handler: d.reference.proto },
  {
    method: 'GET',
    path: DOWNLOAD_PATH,
    access: 'signed-url',
    summary: 'Export downloads behind URLs umbra signed',
    handler: download(d.downloads, d.objects),
  },
  {
    method: 'POST',
    path: `${INGEST_PATH}/*`,
    access: 'operator',
    summary: 'Operator ingestion',
    rawBodies: INGEST_MEDIA_TYPES,
    handler: ingest(d.services),
  },
  { method: 'GET', path: DATA_STATUS_PATH, access: 'operator', summary: 'The data status endpoint', handler: dataStatus(d.services) },
  {
    method: 'POST',
    path: EXPORT_JOBS_PATH,
    access: 'operator',
    summary: 'The export jobs endpoint',
    schema: { body: EXPORT_JOBS_BODY },
    handler: exportJobs(d.services),
  },
];

/** Registers the internal routes, one way: the operator check in front where the route needs it. */
export async function registerInternalRoutes(
  app: FastifyInstance,
  routes: readonly InternalRoute[],
  operatorToken: string | undefined,
  adminAllow: AddressAllowList,
): Promise<void> {
  // Operator routes are limited by address too: a leaked token is of no use from outside the allow-list.
  const fromAdminNetwork = (req: FastifyRequest, summary: string) => {
    if (!adminAllow.allows(req.socket.remoteAddress))
      throw new AppError(
        'PERMISSION_DENIED',
        `${summary} is served only to the addresses in the server's UMBRA_ADMIN_ALLOW (by default the machine itself).`,
      );
  };
  for (const r of routes) {
    const token = r.access === 'operator' ? operatorAuth(operatorToken, r.summary) : undefined;
    const authorize =
      r.access === 'operator'
        ? (req: FastifyRequest) => {
            fromAdminNetwork(req, r.summary);
            token!(req);
          }
        : r.access === 'admin-network'
          ? (req: FastifyRequest) => fromAdminNetwork(req, r.summary)
          : undefined;
    const handler = authorize
      ? (req: FastifyRequest, reply: FastifyReply) => {
          authorize(req);
          return r.handler(req, reply);
        }
      : r.handler;
    const options = {
      method: r.method,
      url: r.path,
      schema: { hide: true, ...r.schema } as never,
      ...(r.operation ? { config: { operation: r.operation } } : {}),
      handler,
    };
    if (!r.rawBodies) {
      app.route(options);
      continue;
    }
    await app.register(async (scope) => {
      // Scoped to this route: /api/v4 routes keep answering 415 to these media types.
      const passStream = (_req: FastifyRequest, payload: Readable, done: (e: Error | null, body?: unknown) => void) => done(null, payload);
      scope.addContentTypeParser([...r.rawBodies!], passStream);
      scope.route(options);
    });
  }
}
