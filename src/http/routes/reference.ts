import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AppError, GRPC, STATUS, type ErrorCode } from '../../errors.ts';
import { PROTO_FILE, PROTO_ROOT, SERVICE_NAME, packageDefinition } from '../../proto.ts';
import { FEED_LIST } from '../../modules/feeds/feed-catalog.ts';
import { API_PREFIX, FEED_EXPORT_OPERATIONS, FEED_STREAM_OPERATIONS, OPERATIONS, type Operation } from '../../operations.ts';
import type { OpenApiDocument } from '../reference/openapi-view.ts';
import { type GrpcMethodInfo, type ReferenceContext, renderReferencePage } from '../reference/reference-page.ts';

export const REFERENCE_PATH = `${API_PREFIX}/docs`;
/** The .proto files, as text, under their include-root paths: `${PROTO_PATH}/example/v1/example_service.proto`. */
export const PROTO_PATH = `${API_PREFIX}/proto`;

/**
 * The page loads nothing: no script at all, and only its own inline stylesheet. A browser that honours
 * the policy refuses anything else, so a later edit that pulls in a remote asset fails the page test.
 */
const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** Every .proto under the include root, by its path there (forward slashes), read once: the files ship with the server. */
function protoFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.proto')) files.set(relative(PROTO_ROOT, full).split(sep).join('/'), readFileSync(full, 'utf8'));
    }
  };
  walk(PROTO_ROOT);
  return files;
}

const GRPC_NAMES = new Map<number, string>(Object.entries(GRPC).map(([name, code]) => [code, name]));

function grpcMethods(): GrpcMethodInfo[] {
  const service = packageDefinition()[SERVICE_NAME] as Record<
    string,
    { requestType: { type: { name: string } }; responseType: { type: { name: string } }; responseStream: boolean }
  >;
  return Object.entries(service).map(([name, m]) => ({
    name,
    request: m.requestType.type.name,
    response: m.responseType.type.name,
    serverStreaming: m.responseStream,
  }));
}

/** The page's context, from the code's own tables: feeds, operations, the gRPC service and the error table. */
function referenceContext(files: readonly string[], grpcAddress: string): ReferenceContext {
  const operations: Operation[] = [
    ...Object.values(OPERATIONS),
    ...Object.values(FEED_STREAM_OPERATIONS),
    ...Object.values(FEED_EXPORT_OPERATIONS).flatMap((ops) => Object.values(ops)),
  ];
  const grpcOf = new Map(operations.filter((o) => o.grpc).map((o) => [o.id, o.grpc!]));
  return {
    openapiUrl: `${API_PREFIX}/openapi.json`,
    feedsBase: `${API_PREFIX}/feeds`,
    feeds: FEED_LIST.map((f) => ({
      id: f.id,
      segment: f.segment,
      streamScope: f.streamScope,
      exportScope: f.exportScope,
      unit: f.unit,
      grpcStream: f.grpcStream,
    })),
    grpcMethodOf: (id) => grpcOf.get(id),
    grpc: {
      service: SERVICE_NAME,
      mainProto: PROTO_FILE,
      localAddress: grpcAddress,
      methods: grpcMethods(),
      // The service's own file first, then what it imports.
      protoFiles: [...files]
        .sort((a, b) => Number(b === PROTO_FILE) - Number(a === PROTO_FILE) || a.localeCompare(b))
        .map((path) => ({ path, url: `${PROTO_PATH}/${path}` })),
      statuses: (Object.entries(STATUS) as [ErrorCode, (typeof STATUS)[ErrorCode]][]).map(([code, row]) => ({
        code,
        http: row.http,
        grpc: GRPC_NAMES.get(row.grpc) ?? String(row.grpc),
        grpcNumber: row.grpc,
        title: row.title,
      })),
    },
  };
}

export interface ReferenceHandlers {
  page: (req: FastifyRequest, reply: FastifyReply) => unknown;
  proto: (req: FastifyRequest, reply: FastifyReply) => unknown;
}

/**
 * The API reference page and the .proto files it links. The page is rendered from the OpenAPI document
 * on first request (the document is complete once the server is ready) and kept: both are fixed for the
 * life of the process.
 */
export function reference(openapi: () => unknown, grpcAddress: string): ReferenceHandlers {
  const files = protoFiles();
  let html: string | undefined;
  return {
    page: async (_req, reply) => {
      html ??= renderReferencePage(openapi() as OpenApiDocument, referenceContext([...files.keys()], grpcAddress));
      reply.header('content-security-policy', CSP).header('x-content-type-options', 'nosniff').type('text/html; charset=utf-8');
      return html;
    },
    proto: async (req, reply) => {
      const path = (req.params as { '*'?: string })['*'] ?? '';
      const text = files.get(path);
      if (text === undefined) {
        throw new AppError('NOT_FOUND', `No proto file ${path}. Served: ${[...files.keys()].join(', ')}.`);
      }
      reply.header('x-content-type-options', 'nosniff').type('text/plain; charset=utf-8');
      return text;
    },
  };
}
