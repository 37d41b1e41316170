import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { Server, ServerCredentials, type ServiceDefinition, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { ReflectionService } from '@grpc/reflection';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics.ts';
import { ConnectionLimiter } from '../lib/connection-limit.ts';
import { FEED_LIST } from '../modules/feeds/feed-catalog.ts';
import type { OperationGuard } from '../operation-guard.ts';
import type { Services } from '../services.ts';
import { getAccountInfo } from './handlers/account.ts';
import { type DownloadLinks, getExportSnapshotMeta, getExportSnapshotUrl, listExportSnapshots } from './handlers/exports.ts';
import { lookupDomain, lookupIp, lookupIps } from './handlers/lookup.ts';
import { feedStreamMethod, recordEncoder } from './handlers/streams.ts';
import { reflectionPackage } from './descriptors.ts';
import { packageDefinition, SERVICE_NAME } from '../proto.ts';

export interface GrpcServerDeps {
  services: Services;
  guard: OperationGuard;
  metrics: Metrics;
  logger: Logger;
  /** Stream lifetime (30 minutes in production). */
  streamLifetimeMs: number;
  /** Aborted when the app closes: open streams end cleanly. */
  closing: AbortSignal;
  /** Connections served at once (new ones beyond it are closed), and how long a connection without calls lives. */
  edge: { maxConnections: number; idleTimeoutMs: number };
  /** How GetExportSnapshotURL makes umbra's own download URLs absolute. */
  downloads: DownloadLinks;
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
    GetExportSnapshotURL: getExportSnapshotUrl(ctx, s, deps.downloads),
    GetExportSnapshotMeta: getExportSnapshotMeta(ctx, s),
    ...Object.fromEntries(FEED_LIST.map((feed) => [feed.grpcStream, feedStreamMethod(streamCtx, feed)])),
  };
  const service = streamsTakeEncodedRecords(definition);
  const server = new Server({
    // Message size bounded at the edge: a full LookupIPs request (1,000 addresses) is far below 1 MiB.
    'grpc.max_receive_message_length': 1024 * 1024,
    // A connection without calls is closed (GOAWAY) after this long: connections that never send a
    // call, or whose client went away silently, do not hold a descriptor for ever.
    'grpc.max_connection_idle_ms': deps.edge.idleTimeoutMs,
    // Pings find peers that vanished without closing (a dead peer is dropped after 2 min + 20 s).
    'grpc.keepalive_time_ms': 120_000,
    'grpc.keepalive_timeout_ms': 20_000,
    // Per connection: calls at once (HTTP/2 SETTINGS; clients queue beyond it), and buffered memory
    // before new calls on it are refused (grpc-js leaves it unlimited by default).
    'grpc.max_concurrent_streams': 1000,
    'grpc-node.max_session_memory': 64,
  });
  server.addService(service, implementation);
  new ReflectionService(reflectionPackage(pkg)).addToServer(server);
  let bound = false;
  // umbra owns the listening socket and hands admitted connections to grpc-js (a connection
  // injector), so the same connection limit as HTTP applies; grpc-js itself has no connection cap.
  // Nothing is reclaimed here (grpc-js does not say which connections are idle): beyond the limit new
  // connections are closed, and idle ones go after grpc.max_connection_idle_ms.
  const limiter = new ConnectionLimiter({
    transport: 'grpc',
    max: deps.edge.maxConnections,
    counters: { refused: () => deps.metrics.grpcConnectionsRefused.inc(), reclaimed: () => {} },
    logger: deps.logger,
  });
  deps.metrics.connectionsOpen.grpc = () => limiter.connections;
  deps.metrics.grpcConnectionsLimit.set(limiter.max);
  let listener: NetServer | undefined;

  return {
    server,
    listen: (host, port, tls) =>
      new Promise((resolve, reject) => {
        const credentials = tls
          ? ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false)
          : ServerCredentials.createInsecure();
        const injector = server.createConnectionInjector(credentials);
        const net = createNetServer();
        net.on('connection', (socket) => injector.injectConnection(socket));
        limiter.attach(net);
        net.once('error', reject);
        net.listen({ host, port }, () => {
          net.off('error', reject);
          listener = net;
          bound = true;
          resolve((net.address() as { port: number }).port);
        });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        // No new connections; the open ones end with their sessions below.
        listener?.close();
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
