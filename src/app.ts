import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import { createHttpServer } from './http/server.ts';
import { Metrics } from './http/metrics.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { nodeKeyCrypto, type KeyCrypto } from './lib/key-crypto.ts';
import { createLogger } from './lib/logger.ts';
import { AccountService } from './modules/accounts/account-service.ts';
import { AdminService } from './modules/accounts/admin-service.ts';
import { DomainService } from './modules/domains/domain-service.ts';
import { noEventsDomainSource, type DomainIntelSource } from './modules/domains/domain-source.ts';
import type { IpDataset } from './modules/lookup/intel-source.ts';
import { emptyIntelligence, type IntelligenceSource } from './modules/lookup/intelligence.ts';
import { LookupService } from './modules/lookup/lookup-service.ts';
import { LimitPolicy } from './modules/ratelimit/limit-policy.ts';
import { RecordValidator } from './modules/feeds/feed-records.ts';
import { IngestService } from './modules/feeds/ingest-service.ts';
import { StreamService } from './modules/feeds/stream-service.ts';
import type { Services } from './services.ts';
import { createStores, type Stores } from './storage/index.ts';

export interface AppDeps {
  /** The loaded IP dataset (tests pass a small one). */
  dataset: IpDataset;
  clock?: Clock;
  crypto?: KeyCrypto;
  stores?: Stores;
  logger?: Logger;
  intelligence?: IntelligenceSource;
  domainSource?: DomainIntelSource;
  defaultMetrics?: boolean;
}

export interface App {
  http: FastifyInstance;
  services: Services;
  stores: Stores;
  metrics: Metrics;
  logger: Logger;
  close(): Promise<void>;
}

/** Composition root: stores → services → servers. Nothing else wires dependencies. */
export async function buildApp(config: Config, deps: AppDeps): Promise<App> {
  const clock = deps.clock ?? systemClock;
  const crypto = deps.crypto ?? nodeKeyCrypto;
  const logger = deps.logger ?? createLogger(config.logLevel);
  const stores = deps.stores ?? createStores(config, clock);
  const metrics = new Metrics({ defaultMetrics: deps.defaultMetrics });
  let dataset = deps.dataset;

  const services: Services = {
    accounts: new AccountService(stores.accounts, stores.ledger, crypto, clock, { cacheMs: config.keyCacheMs }),
    admin: new AdminService(stores.accounts, stores.ledger, crypto, clock),
    limits: new LimitPolicy(stores.accounts, stores.limiter, clock, config.limitsRefreshMs),
    lookup: new LookupService(() => dataset, deps.intelligence ?? emptyIntelligence, stores.ledger, clock),
    domains: new DomainService(deps.domainSource ?? noEventsDomainSource, stores.ledger, clock),
    ingest: new IngestService(stores.feedLog, stores.bus, new RecordValidator(() => clock.now()), logger),
    streams: new StreamService(stores.bus, stores.slots, { maxBuffered: config.streamBuffer }),
    health: async () => {
      const problems = await stores.health();
      return { status: problems.length === 0 ? 'ok' : 'unhealthy', problems };
    },
  };
  // Aborted first on close, so open streams end cleanly and the server can stop.
  const closing = new AbortController();
  const http = await createHttpServer({
    services,
    metrics,
    logger,
    bodyLimitBytes: config.bodyLimitBytes,
    stream: { keepaliveMs: config.streamKeepaliveMs, lifetimeMs: config.streamLifetimeMs },
    closing: closing.signal,
    operatorToken: config.operatorToken,
  });

  return {
    http,
    services,
    stores,
    metrics,
    logger,
    close: async () => {
      closing.abort();
      await http.close();
      await stores.close();
      logger.flush();
    },
  };
}
