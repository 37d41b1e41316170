import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { IntelIndexStats } from './modules/intel/engine/intel-index.ts';

/** One label set's counts, updated with plain arithmetic on the request path. */
interface Series {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative); the last slot is above every bound. */
  buckets: number[];
  sum: number;
  count: number;
  /** Requests not yet handed to the prom-client counter (it is brought up to date at scrape time). */
  uncounted: number;
  counter: { inc(n: number): void };
}

/**
 * A histogram whose series are bound once and observed with plain arithmetic: prom-client's
 * Histogram hashes and validates the labels and allocates on every observe. It sits in the same
 * prom-client Registry, which reads it at scrape time, and gives the same exposition text.
 */
class SeriesHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly all: Series[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly upperBounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  observe(s: Series, value: number): void {
    let i = 0;
    while (i < this.upperBounds.length && value > this.upperBounds[i]!) i++;
    s.buckets[i]!++;
    s.sum += value;
    s.count++;
  }

  emptyBuckets(): number[] {
    return new Array<number>(this.upperBounds.length + 1).fill(0);
  }

  /** The values prom-client's Histogram reports: cumulative buckets, +Inf, sum and count per series. */
  async getForPromString() {
    const values = [];
    const bucketName = `${this.name}_bucket`;
    for (const s of this.all) {
      let acc = 0;
      for (let i = 0; i < this.upperBounds.length; i++) {
        acc += s.buckets[i]!;
        values.push({
          labels: { le: this.upperBounds[i]! as number | string },
          sharedLabels: s.labels,
          value: acc,
          metricName: bucketName,
          exemplar: null,
        });
      }
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${this.name}_count`, exemplar: undefined },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  async get() {
    const data = await this.getForPromString();
    return {
      ...data,
      values: data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })),
    };
  }

  reset(): void {
    for (const s of this.all) {
      s.buckets.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}

/** Prometheus metrics of one server instance (a registry per app, so tests can build many). */
/** Figures a storage backend reports about itself; absent where the backend has no such thing. */
export interface StoreVitals {
  diskFreeBytes?: number;
  diskReserveBytes?: number;
  unsentCredits?: number;
  databaseUnavailable?: number;
}

export class Metrics {
  readonly registry = new Registry();
  /** operation → status → series; no key string is built per request. */
  private readonly series = new Map<string, Map<number, Series>>();
  readonly requests = new Counter({
    name: 'umbra_http_requests_total',
    help: 'HTTP requests by operation and status',
    labelNames: ['operation', 'status'] as const,
    registers: [this.registry],
    // Requests are tallied in their Series on the request path and handed over here, at scrape time.
    collect: () => {
      for (const s of this.latency.all) {
        if (s.uncounted > 0) s.counter.inc(s.uncounted);
        s.uncounted = 0;
      }
    },
  });
  readonly latency = new SeriesHistogram(
    'umbra_http_request_duration_seconds',
    'HTTP request latency by operation and status',
    [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    this.registry,
  );
  readonly creditsCharged = new Counter({
    name: 'umbra_credits_charged_total',
    help: 'Lookup credits charged',
    labelNames: ['operation'] as const,
    registers: [this.registry],
    collect: () => {
      for (const c of this.charged.values()) {
        c.counter.inc(c.uncounted); // even 0: a charged operation has its series, as with inc() per request
        c.uncounted = 0;
      }
    },
  });
  readonly feedRecords = new Counter({
    name: 'umbra_feed_records_total',
    help: 'Feed records ingested, by feed and outcome (accepted: durable and published; rejected: failed validation)',
    labelNames: ['feed', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly streamsOpen = new Gauge({
    name: 'umbra_streams_open',
    help: 'Live feed streams open on this node, by feed',
    labelNames: ['feed'] as const,
    registers: [this.registry],
  });
  readonly streamsEnded = new Counter({
    name: 'umbra_streams_ended_total',
    help: 'Live feed streams ended, by feed and reason (lifetime, client_closed, slow_consumer, backend, server_closing, lease_lost)',
    labelNames: ['feed', 'reason'] as const,
    registers: [this.registry],
  });
  readonly exportJobs = new Counter({
    name: 'umbra_export_jobs_total',
    help: 'Export jobs run (hourly snapshots, daily rollups), by kind and outcome; its timestamp of change tells when the last ran',
    labelNames: ['kind', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly datasetSwaps = new Counter({
    name: 'umbra_dataset_reloads_total',
    help: 'IP dataset files noticed after a rebuild, by outcome (swapped in, or refused and the previous one kept)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly datasetBuiltAt = new Gauge({
    name: 'umbra_dataset_built_timestamp_seconds',
    help: 'Build time of the IP dataset lookups answer from',
    registers: [this.registry],
  });
  /** Set by the app: bytes the current dataset holds for batch answers (its records' JSON made so far). */
  answerBytes: (() => number) | undefined;
  readonly datasetAnswerBytes = new Gauge({
    name: 'umbra_dataset_answer_bytes',
    help:
      "Memory the current IP dataset holds for batch answers: its records' JSON as UTF-8, made on first use " +
      '(4 MiB chunks; at most about 132 MiB for the packaged dataset, once every record has been answered)',
    registers: [this.registry],
    collect: (): void => this.datasetAnswerBytes.set(this.answerBytes?.() ?? 0),
  });
  readonly exportRecovered = new Counter({
    name: 'umbra_export_recovered_publishes_total',
    help:
      'Export publishes a crash interrupted, settled at start or before a pass: completed (the upload had finished, its row is now ' +
      'listed) or abandoned (it never happened; the previous file stays listed)',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });
  readonly exportSkippedLines = new Counter({
    name: 'umbra_export_skipped_lines_total',
    help:
      'Damaged feed log lines (torn, or not JSON) that export jobs left out of a snapshot, by feed; each job that meets a damaged ' +
      'partition counts its lines',
    labelNames: ['feed'] as const,
    registers: [this.registry],
  });
  readonly exportLastJob = new Gauge({
    name: 'umbra_export_last_job_timestamp_seconds',
    help: 'Unix time the last export job finished',
    registers: [this.registry],
  });
  /** Set by the app: counts snapshots at scrape time. */
  snapshotCounter: (() => Promise<Array<{ feed: string; kind: string; count: number }>>) | undefined;
  readonly exportSnapshots = new Gauge({
    name: 'umbra_export_snapshots',
    help: 'Export snapshots that exist, by feed and kind',
    labelNames: ['feed', 'kind'] as const,
    registers: [this.registry],
    collect: async () => {
      let counts: Array<{ feed: string; kind: string; count: number }>;
      try {
        counts = (await this.snapshotCounter?.()) ?? [];
      } catch {
        // The catalog cannot be read (its database is down): the last counts stay, and the scrape goes on,
        // since umbra_database_unavailable is what says so.
        return;
      }
      for (const c of counts) this.exportSnapshots.set({ feed: c.feed, kind: c.kind }, c.count);
    },
  });
  /** Set by the app: the intelligence index's size and memory, read at scrape time. */
  intelStats: (() => IntelIndexStats) | undefined;
  readonly intelAddresses = new Gauge({
    name: 'umbra_intel_addresses',
    help: 'Addresses with feed observations held by the intelligence index',
    registers: [this.registry],
    collect: () => {
      const s = this.intelStats?.();
      if (!s) return;
      this.intelAddresses.set(s.addresses);
      this.intelBytes.set(s.bytes);
      this.intelBudget.set(s.budget_bytes);
      for (const kind of ['addresses', 'ranges'] as const) {
        const delta = s.evictions[kind] - (this.intelEvictionsSeen[kind] ?? 0);
        // inc(0) too: both series exist from the first scrape on.
        this.intelEvictions.inc({ kind: kind === 'addresses' ? 'address' : 'range' }, Math.max(0, delta));
        this.intelEvictionsSeen[kind] = s.evictions[kind];
      }
    },
  });
  readonly intelBytes = new Gauge({
    name: 'umbra_intel_bytes',
    help: 'Bytes the intelligence index holds for feed observations (arrays allocated, strings, anonymizer ranges)',
    registers: [this.registry],
  });
  readonly intelBudget = new Gauge({
    name: 'umbra_intel_budget_bytes',
    help: 'The memory budget of the intelligence index (UMBRA_INTEL_MEMORY_MB)',
    registers: [this.registry],
  });
  readonly intelEvictions = new Counter({
    name: 'umbra_intel_evictions_total',
    help: 'Addresses and anonymizer ranges evicted to keep the intelligence index inside its memory budget, by kind (address, range)',
    labelNames: ['kind'] as const,
    registers: [this.registry],
  });
  private readonly intelEvictionsSeen: Partial<Record<'addresses' | 'ranges', number>> = {};
  readonly grpcCalls = new Counter({
    name: 'umbra_grpc_calls_total',
    help: 'gRPC calls answered, by method and status code name (streams counted when they end or are refused)',
    labelNames: ['method', 'code'] as const,
    registers: [this.registry],
  });
  /** Set by each server's connection limiter: connections open now (read at scrape time). */
  connectionsOpen: { http?: () => number; grpc?: () => number } = {};
  readonly httpConnections: Gauge = new Gauge({
    name: 'umbra_http_connections',
    help: 'HTTP connections open (served; refusals not included)',
    registers: [this.registry],
    collect: (): void => this.httpConnections.set(this.connectionsOpen.http?.() ?? 0),
  });
  readonly httpConnectionsLimit = new Gauge({
    name: 'umbra_http_connections_limit',
    help: 'HTTP connections served at once (UMBRA_MAX_CONNECTIONS)',
    registers: [this.registry],
  });
  readonly httpConnectionsRefused = new Counter({
    name: 'umbra_http_connections_refused_total',
    help: 'HTTP connections refused at the connection limit (503 problem+json, or closed when even the refusal headroom is full)',
    registers: [this.registry],
  });
  readonly httpConnectionsReclaimed = new Counter({
    name: 'umbra_http_connections_reclaimed_total',
    help: 'Idle HTTP connections closed to make room for new ones at the connection limit',
    registers: [this.registry],
  });
  readonly grpcConnections: Gauge = new Gauge({
    name: 'umbra_grpc_connections',
    help: 'gRPC connections open',
    registers: [this.registry],
    collect: (): void => this.grpcConnections.set(this.connectionsOpen.grpc?.() ?? 0),
  });
  readonly grpcConnectionsLimit = new Gauge({
    name: 'umbra_grpc_connections_limit',
    help: 'gRPC connections served at once (UMBRA_GRPC_MAX_CONNECTIONS)',
    registers: [this.registry],
  });
  readonly grpcConnectionsRefused = new Counter({
    name: 'umbra_grpc_connections_refused_total',
    help: 'gRPC connections closed at once at the connection limit',
    registers: [this.registry],
  });
  /** Set by the app: what the stores report about their own health (read at scrape time). */
  storeVitals: (() => StoreVitals) | undefined;
  readonly diskFree: Gauge = new Gauge({
    name: 'umbra_disk_free_bytes',
    help: "Free bytes on the data dir's file system (as last read, less what was written since)",
    registers: [this.registry],
    collect: (): void => this.setVital(this.diskFree, 'diskFreeBytes'),
  });
  readonly diskReserve: Gauge = new Gauge({
    name: 'umbra_disk_reserve_bytes',
    help: 'Free bytes kept on the data dir file system: ingestion is refused (507) below it (UMBRA_DISK_RESERVE_MB)',
    registers: [this.registry],
    collect: (): void => this.setVital(this.diskReserve, 'diskReserveBytes'),
  });
  readonly creditsUnsent: Gauge = new Gauge({
    name: 'umbra_credits_unsent',
    help: 'Credits charged in memory and not yet written to the database (normally near 0; grows while writes fail)',
    registers: [this.registry],
    collect: (): void => this.setVital(this.creditsUnsent, 'unsentCredits'),
  });
  readonly databaseUnavailable: Gauge = new Gauge({
    name: 'umbra_database_unavailable',
    help: '1 while statements on the database keep failing past their deadline (its lock held by another process), else 0',
    registers: [this.registry],
    collect: (): void => this.setVital(this.databaseUnavailable, 'databaseUnavailable'),
  });
  readonly rateLimited = new Counter({
    name: 'umbra_rate_limited_total',
    help: 'Requests refused by a rate bucket',
    labelNames: ['operation', 'bucket'] as const,
    registers: [this.registry],
  });

  /** Credits charged per operation, not yet handed to creditsCharged (done at scrape time). */
  private readonly charged = new Map<string, { uncounted: number; counter: { inc(n: number): void } }>();

  private setVital(g: Gauge, name: keyof StoreVitals): void {
    const v = this.storeVitals?.()[name];
    if (v !== undefined) g.set(v);
  }

  /** Counts one request and its latency: a Map lookup and arithmetic, labels are bound once per pair. */
  observe(operation: string, status: number, seconds: number): void {
    let byStatus = this.series.get(operation);
    if (!byStatus) this.series.set(operation, (byStatus = new Map()));
    let s = byStatus.get(status);
    if (!s) {
      const labels = { operation, status: String(status) };
      s = { labels, buckets: this.latency.emptyBuckets(), sum: 0, count: 0, uncounted: 0, counter: this.requests.labels(labels) };
      byStatus.set(status, s);
      this.latency.all.push(s);
    }
    s.uncounted++;
    this.latency.observe(s, seconds);
  }

  /** Counts credits charged by an operation. */
  charge(operation: string, credits: number): void {
    let c = this.charged.get(operation);
    if (!c) {
      c = { uncounted: 0, counter: this.creditsCharged.labels({ operation }) };
      this.charged.set(operation, c);
    }
    c.uncounted += credits;
  }

  constructor(options: { defaultMetrics?: boolean } = {}) {
    if (options.defaultMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'umbra_' });
  }
}
