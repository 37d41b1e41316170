import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { DemoTraffic } from './demo/demo-traffic.ts';
import { mulberry32 } from './demo/simulator/random.ts';
import { Simulator, simulatorDeps } from './demo/simulator/simulator.ts';
import { createGrpcServer, type GrpcServer } from './grpc/server.ts';
import { createHttpServer } from './http/server.ts';
import { DOWNLOAD_PATH } from './http/routes/downloads.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { parseIp } from './lib/ip-address.ts';
import { nodeKeyCrypto, type KeyCrypto } from './lib/key-crypto.ts';
import { Lifecycles, type Lifecycle } from './lib/lifecycle.ts';
import { createLogger } from './lib/logger.ts';
import { DAY_MS } from './lib/time.ts';
import { type AppError, dependencyFault, isAppError } from './errors.ts';
import { Metrics } from './metrics.ts';
import { AccountService } from './modules/accounts/account-service.ts';
import { AdminService } from './modules/accounts/admin-service.ts';
import type { DatasetLoader } from './modules/dataset/dataset-loader.ts';
import { DatasetWatch } from './modules/dataset/dataset-watch.ts';
import { DomainAggregates } from './modules/domains/domain-aggregates.ts';
import { domainFeedObserver } from './modules/domains/domain-feed-observer.ts';
import { DomainService } from './modules/domains/domain-service.ts';
import type { DomainIntelSource } from './modules/domains/domain-source.ts';
import { CursorCodec } from './modules/exports/cursor-codec.ts';
import { ExportRuntime } from './modules/exports/export-runtime.ts';
import type { ExportScheduler } from './modules/exports/export-scheduler.ts';
import { DownloadSigner } from './modules/exports/download-signer.ts';
import { ExportService, type DownloadVia } from './modules/exports/export-service.ts';
import { snapshotId } from './modules/exports/snapshot-id.ts';
import { FEED_LIST, type FeedDef } from './modules/feeds/feed-catalog.ts';
import { RecordValidator } from './modules/feeds/feed-records.ts';
import { IngestService } from './modules/feeds/ingest-service.ts';
import type { LineDamage } from './modules/feeds/log-lines.ts';
import { LogLearner } from './modules/feeds/log-learner.ts';
import { StreamService } from './modules/feeds/stream-service.ts';
import { dataStatus } from './modules/intel/data-status.ts';
import { IntelIndex, WINDOW_S } from './modules/intel/engine/intel-index.ts';
import { IntelSourcesWatch } from './modules/intel/intel-sources-watch.ts';
import { networkTypeOverride } from './modules/intel/lists/network-type-override.ts';
import type { IntelligenceSource } from './modules/lookup/intelligence.ts';
import { isIndexed, type IpDataset } from './modules/lookup/ip-dataset.ts';
import { LookupData } from './modules/lookup/lookup-data.ts';
import { LookupService } from './modules/lookup/lookup-service.ts';
import { LimitPolicy } from './modules/ratelimit/limit-policy.ts';
import { createOperationGuard } from './operation-guard.ts';
import type { Services } from './services.ts';
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
  /** How soon a failed or lock-busy export pass is tried again (ms, UMBRA_EXPORT_RETRY_S). */
  exportRetryMs?: number;
  /** Serve GET /lookup/ip in front of fastify's pipeline (default true; tests and the bench compare both). */
  fastPath?: boolean;
  /** How often imported intelligence lists and team overlays are checked for changes (ms, default 2000). */
  listsRefreshMs?: number;
  /**
   * Where export downloads redirect: the object store's own URLs or umbra's download route (default
   * the store's when it can presign them; ExportService).
   */
  exportDownloads?: DownloadVia;
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

/** Composition root: stores → services → parts that run → servers. Nothing else wires dependencies. */
export async function buildApp(config: Config, deps: AppDeps): Promise<App> {
  const clock = deps.clock ?? systemClock;
  const crypto = deps.crypto ?? nodeKeyCrypto;
  const logger = deps.logger ?? createLogger(config.logLevel);
  const stores = deps.stores ?? (await createStores(config, clock, logger));
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
  // Snapshots per feed and kind, counted by the catalog at each /metrics scrape (no rows are read).
  const countSnapshots = async () =>
    Promise.all(
      FEED_LIST.flatMap((f) =>
        (['hourly', 'daily'] as const).map(async (kind) => ({ feed: f.id, kind, count: await stores.snapshots.count(f.id, kind) })),
      ),
    );
  const exportRuntime = new ExportRuntime({
    deps: {
      feedLog: stores.feedLog,
      store: stores.objects,
      catalog: stores.snapshots,
      clock,
      workDir: join(config.dataDir, 'export-work'),
    },
    feeds: FEED_LIST.map((f) => f.id),
    scheduled: Boolean(deps.exportJobs),
    lock: stores.jobLock,
    retryMs: deps.exportRetryMs,
    hooks: {
      onDone: (job) => {
        metrics.exportJobs.inc({ kind: job.kind, outcome: 'done' });
        lastExportJobAt = Math.floor(clock.now() / 1000);
        metrics.exportLastJob.set(lastExportJobAt);
        logger.info({ job }, 'export job done');
      },
      onBusy: () => logger.debug('export pass skipped: another node holds the export lock'),
      onError: (job, e) => {
        metrics.exportJobs.inc({ kind: typeof job === 'string' ? job : job.kind, outcome: 'failed' });
        logger.error({ job, err: e.message }, 'export job failed; retried at the next pass');
      },
      onDamagedLines: (r) => {
        metrics.exportSkippedLines.inc({ feed: r.feed }, r.skipped);
        logger.warn(
          { feed: r.feed, hour: new Date(r.hourStartMs).toISOString(), skipped: r.skipped, repaired: r.repaired },
          'export left damaged feed log lines out of a snapshot (torn or not JSON); whole records in them were kept',
        );
      },
      onRecovered: (r) => {
        const ids = (list: typeof r.completed) => list.map((s) => `${s.feed} ${snapshotId(s.date, s.hour)}`);
        metrics.exportRecovered.inc({ outcome: 'completed' }, r.completed.length);
        metrics.exportRecovered.inc({ outcome: 'abandoned' }, r.abandoned.length);
        logger.warn(
          { completed: ids(r.completed), abandoned: ids(r.abandoned) },
          'export publishes interrupted by a crash were settled: uploads that had finished are listed, the others were dropped (the ' +
            'previous files stay listed)',
        );
      },
    },
  });

  // umbra's own download URLs: the route below checks what the export service signs.
  const downloadSigner = new DownloadSigner({ secrets: stores.signingKeys, clock, path: DOWNLOAD_PATH });
  const services: Services = {
    accounts: new AccountService(stores.accounts, stores.ledger, crypto, clock, { cacheMs: config.keyCacheMs }),
    admin: new AdminService(stores.accounts, stores.limits, stores.ledger, crypto, clock),
    limits: new LimitPolicy(stores.limits, stores.limiter, clock, config.limitsRefreshMs),
    lookup: new LookupService(lookupData, deps.intelligence ?? intel!, stores.ledger, clock),
    domains: new DomainService(deps.domainSource ?? domainAggregates, stores.ledger, clock),
    ingest: new IngestService(stores.feedLog, stores.bus, new RecordValidator(() => clock.now()), logger, {
      store: stores.ingestKeys,
      now: () => clock.now(),
    }),
    streams: new StreamService(stores.bus, stores.slots, { maxBuffered: config.streamBuffer, clock }),
    exports: new ExportService(stores.snapshots, stores.objects, new CursorCodec(stores.signingKeys), clock, {
      signer: downloadSigner,
      via: deps.exportDownloads ?? config.distributed?.downloads,
    }),
    runExportJob: (request) => exportRuntime.run(request),
    health: async () => {
      // The count first: a catalog whose database does not answer is then among the stores' problems,
      // and the probe still says what is wrong (a 503 with its lines) rather than failing as a request.
      let snapshots: number | undefined;
      let catalogFault: AppError | undefined;
      try {
        snapshots = await stores.snapshots.count();
      } catch (e) {
        catalogFault = isAppError(e) ? e : dependencyFault(e);
        if (!catalogFault) throw e;
      }
      // Parts report what they lack (state still catching up with the feed log) so a balancer waits for them.
      const problems = [...(await stores.health()), ...parts.problems()];
      if (catalogFault && problems.length === 0) problems.push(`exports: the snapshot catalog cannot be read (${catalogFault.message})`);
      return {
        status: problems.length === 0 ? 'ok' : 'unhealthy',
        problems,
        ...(snapshots === undefined ? {} : { exports: { snapshots, last_job_at: lastExportJobAt } }),
      };
    },
    dataStatus: async () => {
      const view = lookupData.view();
      const status = await dataStatus(
        { ...view.dataset.info, file: deps.datasetFile },
        stores,
        FEED_LIST.map((f) => f.id),
      );
      // The version lookups carry now (the lists as last loaded, which the store may have moved past).
      return { ...status, data_version: view.version.header, intelligence: intel?.stats() };
    },
  };
  services.ingest.onSummary((s) => {
    if (s.accepted > 0) metrics.feedRecords.inc({ feed: s.feed, outcome: 'accepted' }, s.accepted);
    if (s.rejected > 0) metrics.feedRecords.inc({ feed: s.feed, outcome: 'rejected' }, s.rejected);
  });
  metrics.datasetBuiltAt.set(lookupData.dataset.info.built_at);
  metrics.snapshotCounter = countSnapshots;
  metrics.storeVitals = () => stores.vitals();
  metrics.intelStats = intel ? () => intel.stats() : undefined;
  metrics.answerBytes = () => {
    const ds = lookupData.dataset;
    return isIndexed(ds) ? ds.json.size.reserved : 0;
  };

  // A damaged line (a torn write an older version left, or disk corruption) is passed over, not fatal;
  // said once per partition, though honeypot partitions are read by both replays.
  const damagedAtReplay = new Set<string>();
  const onDamage = (feed: FeedDef, hourStartMs: number, d: LineDamage) => {
    const hour = new Date(hourStartMs).toISOString();
    if (damagedAtReplay.has(`${feed.id} ${hour}`)) return;
    damagedAtReplay.add(`${feed.id} ${hour}`);
    logger.warn(
      { feed: feed.id, hour, skipped: d.skipped, repaired: d.repaired },
      'damaged feed log lines passed over at replay (whole records in them kept)',
    );
  };
  const sourceOf = (text: string) => {
    const ip = parseIp(text);
    const ds = lookupData.dataset;
    return ip ? { asn: ds.network(ip).asn, country: ds.location(ip).country } : undefined;
  };
  const learn = {
    log: stores.feedLog,
    bus: stores.bus,
    now: () => clock.now(),
    onDamage,
    onLost: (feed: FeedDef, err: Error) =>
      logger.error({ feed: feed.id, err: err.message }, 'in-memory state stopped receiving a feed; restart the node to rebuild it'),
    onObserverError: (feed: FeedDef, err: Error) => logger.warn({ feed: feed.id, err: err.message }, 'feed observer failed'),
  };
  const intelSources = intel
    ? new IntelSourcesWatch({
        index: intel,
        lists: stores.lists,
        overlays: stores.overlays,
        onLists: (lists, nowS) => {
          const override = networkTypeOverride(lists, nowS);
          lookupData.setLists(lists, override);
          return {
            network_type_ranges: override.ranges,
            ...(override.expired.length > 0 ? { expired_network_lists: override.expired } : {}),
            data_version: lookupData.view().version.header,
          };
        },
        now: () => clock.now(),
        logger,
        // Every node polls the change counters: a list import or an overlay change shows everywhere within 5 s.
        intervalMs: deps.listsRefreshMs ?? 2_000,
      })
    : undefined;
  const datasetWatch = deps.datasetFile
    ? new DatasetWatch({
        file: deps.datasetFile,
        data: lookupData,
        events: {
          swapped: (next) => {
            metrics.datasetSwaps.inc({ outcome: 'swapped' });
            metrics.datasetBuiltAt.set(next.info.built_at);
          },
          refused: () => metrics.datasetSwaps.inc({ outcome: 'refused' }),
        },
        logger,
        intervalMs: deps.datasetRefreshMs ?? 5_000,
        loader: deps.datasetLoader,
      })
    : undefined;
  const demo =
    deps.simulate && config.simulatorRate > 0
      ? new DemoTraffic(
          new Simulator(
            services.ingest,
            simulatorDeps(() => lookupData.dataset, mulberry32(Date.now() >>> 0)),
            clock,
            config.simulatorRate,
            logger,
          ),
          async () => (await Promise.all(FEED_LIST.map((f) => stores.feedLog.hours(f.id)))).every((h) => h.length === 0),
          () => clock.now(),
          logger,
        )
      : undefined;
  // Started in this order, stopped in reverse: state is rebuilt from the log before anything else runs.
  const parts = new Lifecycles(
    present<Lifecycle>([
      new LogLearner({
        ...learn,
        name: 'domain aggregates',
        feeds: FEED_LIST.filter((f) => f.domainEvents),
        windowMs: 31 * DAY_MS,
        observer: domainFeedObserver(domainAggregates, sourceOf),
        onReplayed: (records) => records > 0 && logger.info({ records }, 'domain aggregates rebuilt from the feed log'),
      }),
      intel === undefined
        ? undefined
        : new LogLearner({
            ...learn,
            name: 'intelligence index',
            feeds: FEED_LIST,
            windowMs: (WINDOW_S + 3_600) * 1000,
            observer: intel.observe,
            onReplayed: (records, ms) => {
              if (records === 0) return;
              const s = intel.stats();
              logger.info(
                { records, addresses: s.addresses, bytes: s.bytes, evicted: s.evictions.addresses, ms },
                'intelligence index rebuilt from the feed log',
              );
            },
          }),
      intelSources,
      datasetWatch,
      demo,
      exportRuntime,
    ]),
  );
  await parts.start();

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
    adminAllow: config.adminAllow,
    objects: stores.objects,
    downloads: downloadSigner,
    fastPath: deps.fastPath ?? true,
    grpcPort: config.grpcPort,
    guard,
    edge: config.edge,
    publicUrl: config.publicUrl,
  });
  const grpc = createGrpcServer({
    services,
    guard,
    metrics,
    logger,
    streamLifetimeMs: config.streamLifetimeMs,
    closing: closing.signal,
    edge: { maxConnections: config.edge.grpcMaxConnections, idleTimeoutMs: config.edge.grpcIdleTimeoutMs },
    downloads: {
      publicUrl: config.publicUrl,
      // The bound port (0 in the configuration picks one), once HTTP listens; the configured one before.
      httpPort: () => {
        const address = http.server.address();
        return address && typeof address === 'object' ? address.port : config.httpPort;
      },
      listenHost: config.host,
    },
  });

  let closed: Promise<void> | undefined;
  return {
    http,
    grpc,
    services,
    stores,
    metrics,
    logger,
    domainAggregates,
    intel,
    refreshLists: async () => intelSources?.refresh(),
    lookupData,
    reloadDataset: async () => datasetWatch?.refresh(),
    simulator: demo?.simulator,
    exportScheduler: exportRuntime.scheduler,
    // Once: a second SIGTERM, or a test closing an app it already closed, waits for the first close.
    close: () =>
      (closed ??= (async () => {
        await parts.stop();
        closing.abort();
        await Promise.all([grpc.close(), http.close()]);
        await stores.close();
        logger.flush();
      })()),
  };
}

const present = <T>(xs: ReadonlyArray<T | undefined>): T[] => xs.filter((x): x is T => x !== undefined);
