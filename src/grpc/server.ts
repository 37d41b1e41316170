import { readFileSync } from 'node:fs';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import type { ServiceDefinition } from '@grpc/grpc-js';
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
import { packageDefinition, protoRoot, SERVICE_NAME } from '../proto.ts';
import { frozenPartsEncoder } from './frozen-parts-encoder.ts';
import { type MethodDefinition, WireServer } from './wire-server.ts';

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

/** Reads the configured PEM files (UMBRA_GRPC_TLS_CERT / _KEY); undefined when TLS is not configured. */
export function readGrpcTls(files: { certFile: string; keyFile: string } | undefined): GrpcTls | undefined {
  return files && { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
}

export interface GrpcServer {
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
  const implementation: Record<string, unknown> = {
    GetAccountInfo: getAccountInfo(ctx, s),
    LookupIP: lookupIp(ctx, s),
    LookupIPs: lookupIps(ctx, s),
    LookupDomain: lookupDomain(ctx, s),
    ListExportSnapshots: listExportSnapshots(ctx, s),
    GetExportSnapshotURL: getExportSnapshotUrl(ctx, s, deps.downloads),
    GetExportSnapshotMeta: getExportSnapshotMeta(ctx, s),
    ...Object.fromEntries(FEED_LIST.map((feed) => [feed.grpcStream, feedStreamMethod(streamCtx, feed)])),
  };
  // Stream records are written already encoded (writeEncoded): one encoding per feed message, shared by every call on it.
  const service = { ...definition } as unknown as Record<string, MethodDefinition>;
  // LookupIP answers keep the bytes of the frozen network, location and intelligence records they share.
  service.LookupIP = {
    ...service.LookupIP!,
    responseSerialize: frozenPartsEncoder(protoRoot().lookupType('example.v1.IPLookupResult'), ['network', 'location', 'intelligence']),
  };
  // umbra owns the listening socket and hands admitted connections to the gRPC server, so the same
  // connection limit as HTTP applies. Nothing is reclaimed here: beyond the limit new connections
  // are closed, and idle ones go after the idle timeout.
  const limiter = new ConnectionLimiter({
    transport: 'grpc',
    max: deps.edge.maxConnections,
    counters: { refused: () => deps.metrics.grpcConnectionsRefused.inc(), reclaimed: () => {} },
    logger: deps.logger,
  });
  deps.metrics.connectionsOpen.grpc = () => limiter.connections;
  deps.metrics.grpcConnectionsLimit.set(limiter.max);
  let listener: NetServer | undefined;
  let server: WireServer | undefined;

  return {
    listen: (host, port, tls) =>
      new Promise((resolve, reject) => {
        server = new WireServer({
          // Message size bounded at the edge: a full LookupIPs request (1,000 addresses) is far below 1 MiB.
          maxReceiveMessageLength: 1024 * 1024,
          // A connection without calls is closed (GOAWAY) after this long: connections that never send a
          // call, or whose client went away silently, do not hold a descriptor for ever.
          idleTimeoutMs: deps.edge.idleTimeoutMs,
          // Pings find peers that vanished without closing (a dead peer is dropped after 2 min + 20 s).
          keepaliveTimeMs: 120_000,
          keepaliveTimeoutMs: 20_000,
          // Per connection: calls at once (HTTP/2 SETTINGS; clients queue beyond it), and buffered
          // memory (MiB) before new calls on it are refused.
          maxConcurrentStreams: 1000,
          maxSessionMemory: 64,
          tls,
        });
        server.addService(service, implementation);
        // @grpc/reflection registers its bidirectional methods through addService alone.
        new ReflectionService(reflectionPackage(pkg)).addToServer(server as unknown as Parameters<ReflectionService['addToServer']>[0]);
        const wire = server;
        const net = createNetServer();
        net.on('connection', (socket) => wire.inject(socket));
        limiter.attach(net);
        net.once('error', reject);
        net.listen({ host, port }, () => {
          net.off('error', reject);
          listener = net;
          resolve((net.address() as { port: number }).port);
        });
      }),
    // No new connections; streams were ended by `closing`; unary calls in flight get a moment, then the rest is cut.
    close: async () => {
      listener?.close();
      await server?.close(2000);
    },
  };
}
