import { readFileSync } from 'node:fs';
import { Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import type { Logger } from 'pino';
import type { Metrics } from '../http/metrics.ts';
import { FEED_LIST } from '../modules/feeds/feed-catalog.ts';
import type { OperationGuard } from '../operation-guard.ts';
import type { Services } from '../services.ts';
import { getAccountInfo } from './handlers/account.ts';
import { getExportSnapshotMeta, getExportSnapshotUrl, listExportSnapshots } from './handlers/exports.ts';
import { lookupDomain, lookupIp, lookupIps } from './handlers/lookup.ts';
import { feedStreamMethod, recordEncoder } from './handlers/streams.ts';
import { reflectionPackage } from './descriptors.ts';
import { packageDefinition, SERVICE_NAME } from './proto.ts';

export interface GrpcServerDeps {
  services: Services;
  guard: OperationGuard;
  metrics: Metrics;
  logger: Logger;
  /** Stream lifetime (service.md: 30 minutes). */
  streamLifetimeMs: number;
  /** Aborted when the app closes: open streams end cleanly. */
  closing: AbortSignal;
}

/** PEM certificate chain and private key; without them the server listens in plaintext (local use). */
export interface GrpcTls {
  cert: Buffer;
  key: Buffer;
}

/**
 * Stream methods also accept an already encoded message (a Buffer): a record is encoded once per
 * feed and the bytes are shared by every subscriber (as HTTP shares one JSON line), instead of
 * encoding it again for each open call.
 */
function streamsTakeEncodedRecords(def: ServiceDefinition): ServiceDefinition {
  const out: Record<string, unknown> = {};
  for (const [name, m] of Object.entries(def)) {
    const serialize = m.responseSerialize;
    out[name] = m.responseStream ? { ...m, responseSerialize: (v: unknown) => (Buffer.isBuffer(v) ? v : serialize(v)) } : m;
  }
  return out as ServiceDefinition;
}

/** Reads the configured PEM files (UMBRA_GRPC_TLS_CERT / _KEY); undefined when TLS is not configured. */
export function readGrpcTls(files: { certFile: string; keyFile: string } | undefined): GrpcTls | undefined {
  return files && { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
}

export interface GrpcServer {
  readonly server: Server;
  /** Binds and starts; resolves with the bound port (0 picks a free one). */
  listen(host: string, port: number, tls?: GrpcTls): Promise<number>;
  close(): Promise<void>;
}

/** Builds example.v1.ExampleService with every method registered here, in one visible place, plus reflection v1 and v1alpha. */
export function createGrpcServer(deps: GrpcServerDeps): GrpcServer {
  const { services: s } = deps;
  const ctx = { guard: deps.guard, metrics: deps.metrics, logger: deps.logger };
  const pkg = packageDefinition();
  const definition = pkg[SERVICE_NAME] as ServiceDefinition;
  const serializers = Object.fromEntries(Object.entries(definition).map(([name, m]) => [name, m.responseSerialize]));
  const streamCtx = { ...ctx, services: s, lifetimeMs: deps.streamLifetimeMs, closing: deps.closing, encoded: recordEncoder(serializers) };
  const implementation: UntypedServiceImplementation = {
    GetAccountInfo: getAccountInfo(ctx, s),
    LookupIP: lookupIp(ctx, s),
    LookupIPs: lookupIps(ctx, s),
    LookupDomain: lookupDomain(ctx, s),
    ListExportSnapshots: listExportSnapshots(ctx, s),
    GetExportSnapshotURL: getExportSnapshotUrl(ctx, s),
    GetExportSnapshotMeta: getExportSnapshotMeta(ctx, s),
    ...Object.fromEntries(FEED_LIST.map((feed) => [feed.grpcStream, feedStreamMethod(streamCtx, feed)])),
  };
  const service = streamsTakeEncodedRecords(definition);
  // Message size bounded at the edge: a full LookupIPs request (1,000 addresses) is far below 1 MiB.
  const server = new Server({ 'grpc.max_receive_message_length': 1024 * 1024 });
  server.addService(service, implementation);
  new ReflectionService(reflectionPackage(pkg)).addToServer(server);
  let bound = false;

  return {
    server,
    listen: (host, port, tls) =>
      new Promise((resolve, reject) => {
        const credentials = tls ? ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false) : ServerCredentials.createInsecure();
        const address = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
        server.bindAsync(address, credentials, (err, boundPort) => {
          if (err) return reject(err);
          bound = true;
          resolve(boundPort);
        });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (!bound) {
          server.forceShutdown();
          return resolve();
        }
        // Streams were ended by `closing`; unary calls in flight get a moment, then the rest is cut.
        const force = setTimeout(() => server.forceShutdown(), 2000);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      }),
  };
}
