import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import type { Server } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { Counter, Gauge, Registry } from 'prom-client';
import { DecoyDomains } from '../modules/sensor/decoy-domains.ts';
import { listenerName, publicPortOf, type SensorConfig } from '../modules/sensor/sensor-config.ts';
import type { Captured, SensorIdentity } from '../modules/sensor/sensor-records.ts';
import { CertificateCache } from './certificates.ts';
import { HttpHoneypot, type ListenerStats, type RecordSink } from './http-listener.ts';
import { AdbHoneypot } from './adb-listener.ts';
import { DnsHoneypot } from './dns-listener.ts';
import { TlsHoneypot } from './tls-listener.ts';
import { ListenerMemory } from './memory-budget.ts';
import { openSpoolRoot, Spool, SpoolBudget, SpoolFull } from './spool.ts';
import { abortableSleep, FeedUploader, ingestPoster, type PostBatch } from './uploader.ts';

export interface SensorOptions {
  config: SensorConfig;
  /** The operator token; required unless dryRun. */
  token?: string;
  /** Print records to `stdout` instead of spooling and uploading them. */
  dryRun?: boolean;
  stdout?: NodeJS.WritableStream;
  /** One line per event worth an operator's attention (stderr in the CLI). */
  log: (message: string) => void;
  now?: () => number;
  random?: () => number;
  /** Replaces the HTTP upload (tests of the upload rules). */
  post?: PostBatch;
}

export interface RunningListener {
  name: string;
  protocol: string;
  bind: string;
  port: number;
  publicPort: number;
  stats: ListenerStats;
  /** A TLS listener's HTTP requests inside the connections (honeypot_http records, protocol https). */
  innerHttp?: ListenerStats;
  /** A DNS listener's answers held back. */
  dns?: { rateLimited: number; truncated: number; refused_any: number; tls_failed: number };
  /** A DNS listener serving DNS over TLS (no UDP). */
  dnsOverTls?: boolean;
  /** The listener's share of the memory budget: bytes held now, its size, and the work shed when it was full. */
  memory: ListenerMemory;
}

export interface RunningSensor {
  listeners: RunningListener[];
  healthPort: number;
  health(): SensorHealth;
  stop(): Promise<void>;
}

export interface SensorHealth {
  status: 'ok' | 'degraded';
  dry_run: boolean;
  identity: SensorIdentity;
  listeners: Array<{ name: string; protocol: string; bind: string; port: number; public_port: number } & Record<string, number | string>>;
  spool: { records: number; bytes: number; max_bytes: number } | null;
  /** Bytes the listeners hold for work in progress, of limits.max_buffered_bytes. */
  memory: { buffered_bytes: number; max_buffered_bytes: number };
  upload: Array<{
    feed: string;
    uploaded: number;
    rejected: number;
    replayed_batches: number;
    failures: number;
    consecutive_failures: number;
    last_success: string | null;
    last_error: string | null;
    state: 'ok' | 'retrying' | 'failing';
  }>;
}

/** The feeds the sensor's listeners write. */
const FEEDS = ['honeypot_http', 'honeypot_https', 'honeypot_dns', 'honeypot_adb'] as const;

const listen = (server: Server | HttpServer, bind: string, port: number): Promise<number> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: bind, port }, () => {
      server.off('error', reject);
      resolve((server.address() as { port: number }).port);
    });
  });

/**
 * Starts `umbra sensor`: the spool and its uploaders (or stdout in a dry run), every listener, and the
 * health port. Resolves once all are bound; stop() closes the listeners, lets the records being written
 * reach the spool, and stops the uploaders (what is spooled stays for the next start).
 */
export async function startSensor(o: SensorOptions): Promise<RunningSensor> {
  const c = o.config;
  const now = o.now ?? Date.now;
  const identity: SensorIdentity = {
    tunnel_id: c.identity.tunnel_id,
    pool_id: c.identity.pool_id,
    provider: c.identity.provider,
    proxy_ip: c.identity.proxy_ip,
    server: c.identity.server ?? hostname(),
  };
  const domains = new DecoyDomains(c.domains);
  const budget = new SpoolBudget(c.spool.max_bytes);
  const spools = new Map<string, Spool>();
  const uploaders: FeedUploader[] = [];
  let releaseRoot = () => {};
  /** Keeps one serialized record: true once it is durable (or printed), false when dropped. */
  let keep: (feed: Captured['feed'], json: Buffer) => Promise<boolean>;
  /** RecordSink.append without the memory share: resolves once written, `kept` once fsynced (or dropped). */
  let stage: RecordSink['append'];
  if (o.dryRun) {
    const out = o.stdout ?? process.stdout;
    const yes = Promise.resolve(true);
    keep = async (feed, json) => {
      out.write(`{"feed":${JSON.stringify(feed)},"record":${json.toString()}}\n`);
      return true;
    };
    stage = (feed, json, kept) => {
      out.write(`{"feed":"${feed}","record":${json.toString()}}\n`);
      queueMicrotask(() => kept(true));
      return yes;
    };
  } else {
    if (!o.token) throw new Error('no operator token: set UMBRA_OPERATOR_TOKEN or token_file (or use --dry-run)');
    const root = openSpoolRoot(c.spool.dir);
    releaseRoot = root.release;
    const post = o.post ?? ingestPoster(c.server, o.token, c.upload.timeout_ms);
    for (const feed of FEEDS) {
      const spool = await Spool.open({ root: c.spool.dir, feed, spoolId: root.spoolId, segmentBytes: c.spool.segment_bytes, budget });
      if (spool.repairedBytes > 0) o.log(`spool ${join(c.spool.dir, feed)}: cut ${spool.repairedBytes} bytes of a record torn by a crash`);
      spools.set(feed, spool);
      const up = new FeedUploader(
        feed,
        spool,
        post,
        { batchRecords: c.upload.batch_records, batchBytes: c.upload.batch_bytes, lingerMs: c.upload.linger_ms },
        {
          now,
          random: o.random ?? Math.random,
          sleep: abortableSleep,
          onError: (f, detail, failures) => o.log(`upload ${f}: ${detail}${failures ? ` (failure ${failures}; retrying)` : ''}`),
        },
      );
      uploaders.push(up);
    }
    let lastFullLog = 0;
    const logLost = (e: unknown): false => {
      // At most one line a minute: a flood against a full spool must not flood the log too.
      if (now() - lastFullLog > 60_000) {
        lastFullLog = now();
        o.log(
          e instanceof SpoolFull
            ? `spool full (${c.spool.max_bytes} bytes): records are dropped until it drains`
            : `spool write failed: ${(e as Error).message}`,
        );
      }
      return false;
    };
    keep = async (feed, json) => {
      try {
        await spools.get(feed)!.append(json);
        return true;
      } catch (e) {
        return logLost(e);
      }
    };
    stage = (feed, json, kept) => spools.get(feed)!.stage(json, (e) => kept(e === undefined || logLost(e)));
  }
  /**
   * A listener's sink: a record waiting for the spool holds its serialized bytes in the listener's
   * memory share; with the share full it is dropped (shed) rather than queued.
   */
  const notKept = Promise.resolve(false);
  const sinkOf = (memory: ListenerMemory): RecordSink => ({
    capture: async (cap: Captured) => {
      const json = Buffer.from(JSON.stringify(cap.record));
      if (!memory.take(json.length)) return false;
      try {
        return await keep(cap.feed, json);
      } finally {
        memory.give(json.length);
      }
    },
    // Held until written to the spool file (the spool then owns the bytes).
    append: (feed, json, kept) => {
      if (!memory.take(json.length)) {
        queueMicrotask(() => kept(false));
        return notKept;
      }
      return stage(feed, json, kept).finally(() => memory.give(json.length));
    },
  });

  const listeners: Array<RunningListener & { server: Server; honeypot: { destroyAll(): void }; close?: () => void }> = [];
  const certificates = new CertificateCache(1024, now);
  try {
    for (const l of c.listeners) {
      let bound = 0;
      const publicPort = () => publicPortOf(l, bound);
      const memory = new ListenerMemory(l.max_buffered_bytes ?? c.limits.max_buffered_bytes);
      const sink = sinkOf(memory);
      if (l.protocol === 'dns') {
        const dns = new DnsHoneypot(l, { identity, domains, sink, now, certificates, memory });
        const { port, tcp, udp } = await dns.listen();
        bound = port;
        listeners.push({
          name: listenerName(l),
          protocol: l.protocol,
          bind: l.bind,
          port,
          publicPort: publicPortOf(l, port),
          stats: dns.stats,
          dns: dns.stats,
          ...(l.tls ? { dnsOverTls: true } : {}),
          server: tcp,
          honeypot: dns,
          close: () => udp?.close(),
          memory,
        });
        continue;
      }
      const honeypot =
        l.protocol === 'tls'
          ? new TlsHoneypot(l, { identity, domains, sink, certificates, now, publicPort, memory })
          : l.protocol === 'adb'
            ? new AdbHoneypot(l, { sink, now, memory })
            : new HttpHoneypot(l, { identity, domains, sink, now, publicPort, memory });
      const server = honeypot.createServer();
      bound = await listen(server, l.bind, l.port);
      listeners.push({
        name: listenerName(l),
        protocol: l.protocol,
        bind: l.bind,
        port: bound,
        publicPort: publicPortOf(l, bound),
        stats: honeypot.stats,
        ...(honeypot instanceof TlsHoneypot ? { innerHttp: honeypot.inner.stats } : {}),
        server,
        honeypot,
        memory,
      });
    }
  } catch (e) {
    for (const l of listeners) l.server.close();
    for (const s of spools.values()) await s.close();
    releaseRoot();
    throw e;
  }

  const health = (): SensorHealth => {
    const upload = uploaders.map((u) => ({
      feed: u.feed,
      uploaded: u.stats.uploaded,
      rejected: u.stats.rejected,
      replayed_batches: u.stats.replayed,
      failures: u.stats.failures,
      consecutive_failures: u.stats.consecutiveFailures,
      last_success: u.stats.lastSuccessMs === undefined ? null : new Date(u.stats.lastSuccessMs).toISOString(),
      last_error: u.stats.lastError ?? null,
      state: (u.failing ? 'failing' : u.stats.consecutiveFailures > 0 ? 'retrying' : 'ok') as 'ok' | 'retrying' | 'failing',
    }));
    let records = 0;
    let bytes = 0;
    for (const s of spools.values()) {
      records += s.depth;
      bytes += s.bytes;
    }
    return {
      status: upload.some((u) => u.state === 'failing') ? 'degraded' : 'ok',
      dry_run: Boolean(o.dryRun),
      identity,
      listeners: listeners.map((l) => ({
        name: l.name,
        protocol: l.protocol,
        bind: l.bind,
        port: l.port,
        public_port: l.publicPort,
        connections: l.stats.connections,
        open_connections: l.stats.open,
        refused_connections: l.stats.refused,
        records: l.stats.records,
        malformed: l.stats.malformed,
        dropped: l.stats.dropped,
        bytes_in: l.stats.bytesIn,
        ...(l.innerHttp
          ? { http_records: l.innerHttp.records, http_malformed: l.innerHttp.malformed, http_dropped: l.innerHttp.dropped }
          : {}),
        ...(l.dns
          ? {
              rate_limited: l.dns.rateLimited,
              truncated: l.dns.truncated,
              refused_any: l.dns.refused_any,
              // DNS over TLS: connections whose bytes were not TLS or whose handshake failed.
              ...(l.dnsOverTls ? { tls_failed: l.dns.tls_failed } : {}),
            }
          : {}),
        buffered_bytes: l.memory.used,
        max_buffered_bytes: l.memory.max,
        shed: l.memory.shed,
      })),
      spool: o.dryRun ? null : { records, bytes, max_bytes: c.spool.max_bytes },
      memory: {
        buffered_bytes: listeners.reduce((n, l) => n + l.memory.used, 0),
        max_buffered_bytes: c.limits.max_buffered_bytes,
      },
      upload,
    };
  };

  const registry = sensorMetrics(health);
  const healthServer = createHttpServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET' }).end();
    } else if (path === '/health') {
      const h = health();
      res.writeHead(h.status === 'ok' ? 200 : 503, { 'content-type': 'application/json' }).end(JSON.stringify(h));
    } else if (path === '/metrics') {
      registry.metrics().then(
        (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
        () => res.writeHead(500).end(),
      );
    } else res.writeHead(404, { 'content-type': 'application/json' }).end('{"error":"not found: try /health or /metrics"}');
  });
  const healthPort = await listen(healthServer, c.health.bind, c.health.port);
  for (const u of uploaders) u.start();

  return {
    listeners: listeners.map(({ server: _s, honeypot: _h, ...l }) => l),
    healthPort,
    health,
    stop: async () => {
      await Promise.all(
        listeners.map(
          (l) =>
            new Promise<void>((resolve) => {
              l.server.close(() => resolve());
              l.honeypot.destroyAll();
              l.close?.();
            }),
        ),
      );
      await new Promise<void>((resolve) => healthServer.close(() => resolve()));
      healthServer.closeAllConnections();
      await Promise.all(uploaders.map((u) => u.stop()));
      for (const s of spools.values()) await s.close();
      releaseRoot();
    },
  };
}

/** /metrics: the /health figures in Prometheus form, read from the same counters when scraped. */
function sensorMetrics(health: () => SensorHealth): Registry {
  const registry = new Registry();
  const perListener = (name: string, help: string, field: string, counter: boolean) => {
    const Kind = counter ? Counter : Gauge;
    return new Kind({
      name,
      help,
      labelNames: ['listener', 'protocol', 'public_port'],
      registers: [registry],
      collect(this: Counter | Gauge) {
        this.reset();
        for (const l of health().listeners)
          (this as Gauge).inc({ listener: l.name, protocol: l.protocol, public_port: String(l.public_port) }, Number(l[field]) || 0);
      },
    });
  };
  perListener('umbra_sensor_connections_total', 'Connections accepted by a listener', 'connections', true);
  perListener('umbra_sensor_open_connections', 'Connections open now', 'open_connections', false);
  perListener(
    'umbra_sensor_refused_connections_total',
    'Connections closed at once (listener or per-source limit)',
    'refused_connections',
    true,
  );
  perListener('umbra_sensor_records_total', 'Records captured and kept', 'records', true);
  perListener('umbra_sensor_malformed_total', 'Records of requests that did not parse whole', 'malformed', true);
  perListener('umbra_sensor_dropped_total', 'Records the spool could not keep', 'dropped', true);
  perListener('umbra_sensor_bytes_in_total', 'Bytes received by a listener', 'bytes_in', true);
  perListener(
    'umbra_sensor_buffered_bytes',
    'Bytes a listener holds for work in progress (its memory share in use)',
    'buffered_bytes',
    false,
  );
  perListener('umbra_sensor_max_buffered_bytes', "A listener's memory share", 'max_buffered_bytes', false);
  perListener(
    'umbra_sensor_shed_total',
    'Connections, queries and records dropped because the listener memory share was full',
    'shed',
    true,
  );
  const spool = (name: string, help: string, field: 'records' | 'bytes') =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(health().spool?.[field] ?? 0);
      },
    });
  spool('umbra_sensor_spool_records', 'Records spooled and not yet stored by the server', 'records');
  spool('umbra_sensor_spool_bytes', 'Bytes of the spool files', 'bytes');
  const perFeed = (name: string, help: string, field: 'uploaded' | 'rejected' | 'failures' | 'consecutive_failures', counter: boolean) => {
    const Kind = counter ? Counter : Gauge;
    return new Kind({
      name,
      help,
      labelNames: ['feed'],
      registers: [registry],
      collect(this: Counter | Gauge) {
        this.reset();
        for (const u of health().upload) (this as Gauge).inc({ feed: u.feed }, u[field]);
      },
    });
  };
  perFeed('umbra_sensor_uploaded_records_total', 'Records the server stored', 'uploaded', true);
  perFeed('umbra_sensor_rejected_records_total', 'Records the server refused as invalid', 'rejected', true);
  perFeed('umbra_sensor_upload_failures_total', 'Upload attempts that failed (retried)', 'failures', true);
  perFeed('umbra_sensor_upload_consecutive_failures', 'Failed attempts since the last stored batch', 'consecutive_failures', false);
  new Gauge({
    name: 'umbra_sensor_last_upload_timestamp_seconds',
    help: 'When the server last stored a batch (Unix seconds; 0 before the first)',
    labelNames: ['feed'],
    registers: [registry],
    collect() {
      this.reset();
      for (const u of health().upload) this.set({ feed: u.feed }, u.last_success ? Date.parse(u.last_success) / 1000 : 0);
    },
  });
  return registry;
}
