import { setMaxListeners } from 'node:events';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { createHttpServer } from './http/server.ts';
import { createGrpcServer, type GrpcServer } from './grpc/server.ts';
import { Metrics } from './metrics.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { nodeKeyCrypto, type KeyCrypto } from './lib/key-crypto.ts';
import { createLogger } from './lib/logger.ts';
import { AccountService } from './modules/accounts/account-service.ts';
import { AdminService } from './modules/accounts/admin-service.ts';
import { DomainService } from './modules/domains/domain-service.ts';
import type { DomainIntelSource } from './modules/domains/domain-source.ts';
import type { IpDataset } from './modules/lookup/ip-dataset.ts';
import type { IntelligenceSource } from './modules/lookup/intelligence.ts';
import { IntelIndex, WINDOW_S } from './modules/intel/engine/intel-index.ts';
import { RevisionWatcher } from './lib/revision-watcher.ts';
import { LookupService } from './modules/lookup/lookup-service.ts';
import { LookupData } from './modules/lookup/lookup-data.ts';
import { networkTypeOverride } from './modules/intel/lists/network-type-override.ts';
import { watchDatasetFile } from './modules/dataset/dataset-watch.ts';
import type { DatasetLoader } from './modules/dataset/dataset-loader.ts';
import { dataStatus } from './modules/intel/data-status.ts';
import { LimitPolicy } from './modules/ratelimit/limit-policy.ts';
import { RecordValidator } from './modules/feeds/feed-records.ts';
import { IngestService } from './modules/feeds/ingest-service.ts';
import { StreamService } from './modules/feeds/stream-service.ts';
import { DomainAggregates } from './modules/domains/domain-aggregates.ts';
import { domainFeedObserver } from './modules/domains/domain-feed-observer.ts';
import { FEED_LIST, type FeedDef } from './modules/feeds/feed-catalog.ts';
import type { LineDamage } from './modules/feeds/log-lines.ts';
import { replayLog } from './modules/feeds/log-replay.ts';
import { Simulator, simulatorDeps } from './demo/simulator/simulator.ts';
import { mulberry32 } from './demo/simulator/random.ts';
import { parseIp } from './lib/ip-address.ts';
import { join } from 'node:path';
import { CursorCodec } from './modules/exports/cursor-codec.ts';
import { ExportScheduler } from './modules/exports/export-scheduler.ts';
import { ExportService } from './modules/exports/export-service.ts';
import { snapshotId } from './modules/exports/snapshot-id.ts';
import { ParquetWriter } from './modules/exports/parquet-writer.ts';
import type { DamageReport, ExportJobDeps } from './modules/exports/export-job.ts';
import { JobLane } from './modules/exports/job-lane.ts';
import { manualJob, runManualJob } from './modules/exports/manual-jobs.ts';
import { recoverPublishes, type RecoveryReport } from './modules/exports/publish-recovery.ts';
import type { Services } from './services.ts';
import { createOperationGuard } from './operation-guard.ts';
import { createStores, type Stores } from './storage/index.ts';

export interface AppDeps {
  /** The loaded IP dataset (tests pass a small one). */
  dataset: IpDataset;
  /**
   * The file it was loaded from: watched (and re-read on `app.reloadDataset()`, which serve calls on
   * SIGHUP), so a rebuilt dataset is swapped in without a restart. Absent: the dataset never changes.
   */
  datasetFile?: string;
  /** How often the dataset file is checked for a rebuild (ms, default 5000). */
  datasetRefreshMs?: number;
  /** The loader `dataset` came from (serve loads through it, so later swaps reuse its memory). */
  datasetLoader?: DatasetLoader;
  clock?: Clock;
  crypto?: KeyCrypto;
  stores?: Stores;
  logger?: Logger;
  intelligence?: IntelligenceSource;
  domainSource?: DomainIntelSource;
  defaultMetrics?: boolean;
  /** Demo mode: run the feed simulator (backfilling 48 hours when the feed log is empty). */
  simulate?: boolean;
  /** Run the hourly snapshot and daily rollup jobs (serve does when UMBRA_EXPORT_JOBS is on). */
  exportJobs?: boolean;
  /** Serve GET /lookup/ip in front of fastify's pipeline (default true; tests and the bench compare both). */
  fastPath?: boolean;
  /** How often imported intelligence lists and team overlays are checked for changes (ms, default 5000). */
  listsRefreshMs?: number;
}

export interface App {
  http: FastifyInstance;
  /** example.v1.ExampleService; bound by `listen` (serve, tests), closed with the app. */
  grpc: GrpcServer;
  services: Services;
  stores: Stores;
  metrics: Metrics;
  logger: Logger;
  domainAggregates: DomainAggregates;
  /** The intelligence index (absent when a test injects its own source). */
  intel: IntelIndex | undefined;
  /** Re-reads the imported lists and team overlays now (the server also polls them). */
  refreshLists(): Promise<void>;
  /** The data lookups answer from: the dataset, list network types and the data version. */
  lookupData: LookupData;
  /** Loads the dataset file again when it changed since the last load (off the event loop), then swaps it in. */
  reloadDataset(): Promise<void>;
  simulator: Simulator | undefined;
  exportScheduler: ExportScheduler | undefined;
  close(): Promise<void>;
}

/** Composition root: stores → services → servers. Nothing else wires dependencies. */
export async function buildApp(config: Config, deps: AppDeps): Promise<App> {
  const clock = deps.clock ?? systemClock;
  const crypto = deps.crypto ?? nodeKeyCrypto;
  const logger = deps.logger ?? createLogger(config.logLevel);
  const stores = deps.stores ?? createStores(config, clock, logger);
  const metrics = new Metrics({ defaultMetrics: deps.defaultMetrics });
  const lookupData = new LookupData(deps.dataset);
  const domainAggregates = new DomainAggregates();
  const intel = deps.intelligence
    ? undefined
    : new IntelIndex(clock, {
        budgetBytes: config.intelMemoryBytes,
        onBudgetReached: () =>
          logger.warn(
            { budget_bytes: config.intelMemoryBytes, addresses: intel?.addresses },
            'intelligence index reached its memory budget (UMBRA_INTEL_MEMORY_MB): the least informative addresses are evicted from now on',
          ),
      });
  let lastExportJobAt: number | null = null;
  // Snapshots per feed and kind, read for /health and at each /metrics scrape (the catalog is small).
  const countSnapshots = async () =>
    (
      await Promise.all(
        FEED_LIST.map(async (f) => {
          const items = (await stores.snapshots.list(f.id, { limit: 100_000 })).items;
          return (['hourly', 'daily'] as const).map((kind) => ({ feed: f.id, kind, count: items.filter((i) => i.kind === kind).length }));
        }),
      )
    ).flat();

  const lane = new JobLane();
  const services: Services = {
    accounts: new AccountService(stores.accounts, stores.ledger, crypto, clock, { cacheMs: config.keyCacheMs }),
    admin: new AdminService(stores.accounts, stores.limits, stores.ledger, crypto, clock),
    limits: new LimitPolicy(stores.limits, stores.limiter, clock, config.limitsRefreshMs),
    lookup: new LookupService(lookupData, deps.intelligence ?? intel!, stores.ledger, clock),
    domains: new DomainService(deps.domainSource ?? domainAggregates, stores.ledger, clock),
    ingest: new IngestService(stores.feedLog, stores.bus, new RecordValidator(() => clock.now()), logger),
    streams: new StreamService(stores.bus, stores.slots, { maxBuffered: config.streamBuffer }),
    exports: new ExportService(stores.snapshots, stores.objects, new CursorCodec(stores.signingKeys), clock),
    // An operator's job (umbra exports run-hourly|rollup, through the internal endpoint): in this
    // process's lane, so it never overlaps a scheduled one; the writer is made on first use.
    runExportJob: (request) => {
      const job = manualJob(request, clock.now());
      return lane.run(async () => {
        const d = await exportDeps();
        const settled = await recoverPublishes(d);
        if (settled.completed.length + settled.abandoned.length > 0) onRecovered(settled);
        return runManualJob(d, job);
      });
    },
    health: async () => {
      const problems = await stores.health();
      const snapshots = (await countSnapshots()).reduce((n, c) => n + c.count, 0);
      return { status: problems.length === 0 ? 'ok' : 'unhealthy', problems, exports: { snapshots, last_job_at: lastExportJobAt } };
    },
    dataStatus: async () => {
      const view = lookupData.view();
      const status = await dataStatus({ ...view.dataset.info, file: deps.datasetFile }, stores, FEED_LIST.map((f) => f.id));
      // The version lookups carry now (the lists as last loaded, which the store may have moved past).
      return { ...status, data_version: view.version.header, intelligence: intel?.stats() };
    },
  };
  // Domain aggregates: rebuilt from the last 30 days of the durable log, then kept current by ingestion.
  const sourceOf = (text: string) => {
    const ip = parseIp(text);
    const ds = lookupData.dataset;
    return ip ? { asn: ds.network(ip).asn, country: ds.location(ip).country } : undefined;
  };
  const domainObserver = domainFeedObserver(domainAggregates, sourceOf);
  // A damaged line (a torn write an older version left, or disk corruption) is passed over, not fatal;
  // said once per partition, though honeypot partitions are read by both replays.
  const damagedAtReplay = new Set<string>();
  const replayDamage = (feed: FeedDef, hourStartMs: number, d: LineDamage) => {
    const hour = new Date(hourStartMs).toISOString();
    if (damagedAtReplay.has(`${feed.id} ${hour}`)) return;
    damagedAtReplay.add(`${feed.id} ${hour}`);
    logger.warn({ feed: feed.id, hour, skipped: d.skipped, repaired: d.repaired }, 'damaged feed log lines passed over at replay (whole records in them kept)');
  };
  const replayed = await replayLog(stores.feedLog, FEED_LIST.filter((f) => f.domainEvents), clock.now() - 31 * 86_400_000, domainObserver, replayDamage);
  if (replayed > 0) logger.info({ records: replayed }, 'domain aggregates rebuilt from the feed log');
  services.ingest.observe(domainObserver);
  // Intelligence: the last 90 days of every feed replayed, then kept current by ingestion; lists polled.
  const watchers: RevisionWatcher[] = [];
  if (intel) {
    const started = Date.now();
    const records = await replayLog(stores.feedLog, FEED_LIST, clock.now() - (WINDOW_S + 3_600) * 1000, intel.observe, replayDamage);
    if (records > 0) {
      const s = intel.stats();
      logger.info({ records, addresses: s.addresses, bytes: s.bytes, evicted: s.evictions.addresses, ms: Date.now() - started }, 'intelligence index rebuilt from the feed log');
    }
    services.ingest.observe(intel.observe);
    const loadLists = async () => {
      const lists = await stores.lists.all();
      intel.setLists(lists);
      const override = networkTypeOverride(lists);
      lookupData.setLists(lists, override);
      return { lists: lists.length, cidrs: lists.reduce((n, l) => n + l.cidrs.length, 0), network_type_ranges: override.ranges, data_version: lookupData.view().version.header };
    };
    const loadOverlays = async () => {
      const overlays = await stores.overlays.all();
      intel.setOverlays(overlays);
      return { overlays: overlays.length };
    };
    watchers.push(new RevisionWatcher('intelligence lists', () => stores.lists.revision(), loadLists, logger));
    watchers.push(new RevisionWatcher('intelligence overlays', () => stores.overlays.revision(), loadOverlays, logger));
    for (const w of watchers) {
      await w.refresh();
      w.start(deps.listsRefreshMs ?? 5_000);
    }
  }
  // The IP dataset: a rebuilt file is loaded off the event loop and swapped in (modules/intel/dataset-watch.ts).
  const datasetWatch = deps.datasetFile
    ? await watchDatasetFile(
        deps.datasetFile,
        lookupData,
        {
          swapped: (next) => {
            metrics.datasetSwaps.inc({ outcome: 'swapped' });
            metrics.datasetBuiltAt.set(next.info.built_at);
          },
          refused: () => metrics.datasetSwaps.inc({ outcome: 'refused' }),
        },
        logger,
        deps.datasetRefreshMs ?? 5_000,
        deps.datasetLoader,
      )
    : undefined;
  metrics.datasetBuiltAt.set(lookupData.dataset.info.built_at);
  services.ingest.onSummary((s) => {
    if (s.accepted > 0) metrics.feedRecords.inc({ feed: s.feed, outcome: 'accepted' }, s.accepted);
    if (s.rejected > 0) metrics.feedRecords.inc({ feed: s.feed, outcome: 'rejected' }, s.rejected);
  });

  let simulator: Simulator | undefined;
  if (deps.simulate && config.simulatorRate > 0) {
    simulator = new Simulator(services.ingest, simulatorDeps(() => lookupData.dataset, mulberry32(Date.now() >>> 0)), clock, config.simulatorRate, logger);
    const empty = (await Promise.all(FEED_LIST.map((f) => stores.feedLog.hours(f.id)))).every((h) => h.length === 0);
    if (empty) logger.info({ records: await simulator.backfill(clock.now()) }, 'simulator backfilled the last 48 hours');
    simulator.start();
  }

  metrics.snapshotCounter = countSnapshots;
  metrics.storeVitals = () => stores.vitals();
  metrics.intelStats = intel ? () => intel.stats() : undefined;
  let exportScheduler: ExportScheduler | undefined;
  let writer: ParquetWriter | undefined;
  let jobDeps: ExportJobDeps | undefined;
  const workDir = join(config.dataDir, 'export-work');
  const onDamagedLines = (r: DamageReport) => {
    metrics.exportSkippedLines.inc({ feed: r.feed }, r.skipped);
    logger.warn(
      { feed: r.feed, hour: new Date(r.hourStartMs).toISOString(), skipped: r.skipped, repaired: r.repaired },
      'export left damaged feed log lines out of a snapshot (torn or not JSON); whole records in them were kept',
    );
  };
  function onRecovered(r: RecoveryReport): void {
    const ids = (list: typeof r.completed) => list.map((s) => `${s.feed} ${snapshotId(s.date, s.hour)}`);
    metrics.exportRecovered.inc({ outcome: 'completed' }, r.completed.length);
    metrics.exportRecovered.inc({ outcome: 'abandoned' }, r.abandoned.length);
    logger.warn({ completed: ids(r.completed), abandoned: ids(r.abandoned) }, 'export publishes interrupted by a crash were settled: uploads that had finished are listed, the others were dropped (the previous files stay listed)');
  }
  async function exportDeps(): Promise<ExportJobDeps> {
    writer ??= await ParquetWriter.create({ spoolDir: workDir });
    return (jobDeps ??= { feedLog: stores.feedLog, store: stores.objects, catalog: stores.snapshots, writer, clock, workDir, onDamagedLines });
  }
  if (deps.exportJobs) {
    exportScheduler = new ExportScheduler(await exportDeps(), FEED_LIST.map((f) => f.id), clock, undefined, {
      onDone: (job) => {
        metrics.exportJobs.inc({ kind: job.kind, outcome: 'done' });
        lastExportJobAt = Math.floor(clock.now() / 1000);
        metrics.exportLastJob.set(lastExportJobAt);
      },
      onError: (job, e) => {
        metrics.exportJobs.inc({ kind: typeof job === 'string' ? job : job.kind, outcome: 'failed' });
        logger.error({ job, err: e.message }, 'export job failed; retried in a minute');
      },
      onDamagedLines,
      onRecovered,
    }, lane);
    exportScheduler.start();
  }

  // Aborted first on close, so open streams end cleanly and the server can stop.
  const closing = new AbortController();
  // Every open stream listens to it (and removes its listener when it ends).
  setMaxListeners(0, closing.signal);
  // One guard for both transports: the same key checks, scopes and team rate buckets.
  const guard = createOperationGuard({
    accounts: services.accounts,
    limits: services.limits,
    onRateLimited: (op) => metrics.rateLimited.inc({ operation: op.id, bucket: op.bucket ?? '' }),
  });
  const http = await createHttpServer({
    services,
    metrics,
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    stream: { keepaliveMs: config.streamKeepaliveMs, lifetimeMs: config.streamLifetimeMs },
    closing: closing.signal,
    operatorToken: config.operatorToken,
    objects: stores.objects,
    fastPath: deps.fastPath ?? true,
    guard,
    edge: config.edge,
  });

  let closed: Promise<void> | undefined;
  const grpc = createGrpcServer({
    services,
    guard,
    metrics,
    logger,
    streamLifetimeMs: config.streamLifetimeMs,
    closing: closing.signal,
    edge: { maxConnections: config.edge.grpcMaxConnections, idleTimeoutMs: config.edge.grpcIdleTimeoutMs },
  });

  return {
    http,
    grpc,
    services,
    stores,
    metrics,
    logger,
    domainAggregates,
    intel,
    refreshLists: async () => void (await Promise.all(watchers.map((w) => w.refresh()))),
    lookupData,
    reloadDataset: async () => datasetWatch?.refresh(),
    simulator,
    exportScheduler,
    // Once: a second SIGTERM, or a test closing an app it already closed, waits for the first close.
    close: () =>
      (closed ??= (async () => {
        await simulator?.stop();
        for (const w of watchers) await w.stop();
        await datasetWatch?.close();
        intel?.close();
        await exportScheduler?.stop();
        writer?.close();
        closing.abort();
        await Promise.all([grpc.close(), http.close()]);
        await stores.close();
        logger.flush();
      })()),
  };
}
