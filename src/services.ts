import type { AccountService } from './modules/accounts/account-service.ts';
import type { AdminService } from './modules/accounts/admin-service.ts';
import type { DomainService } from './modules/domains/domain-service.ts';
import type { LookupService } from './modules/lookup/lookup-service.ts';
import type { LimitPolicy } from './modules/ratelimit/limit-policy.ts';
import type { IngestService } from './modules/feeds/ingest-service.ts';
import type { StreamService } from './modules/feeds/stream-service.ts';
import type { ExportService } from './modules/exports/export-service.ts';
import type { DataStatus } from './modules/intel/data-status.ts';
import type { ManualJobRequest } from './modules/exports/manual-jobs.ts';
import type { Snapshot } from './modules/exports/snapshot-catalog.ts';

export interface ExportsHealth {
  /** Snapshots that exist now, all feeds. */
  snapshots: number;
  /** Unix seconds of the last export job that finished, null before the first. */
  last_job_at: number | null;
}

export interface HealthReport {
  status: 'ok' | 'unhealthy';
  problems: string[];
  /** Absent when the snapshot catalog cannot be read (its database is down: a problem says so). */
  exports?: ExportsHealth;
}

/** The domain services that the transports (HTTP, gRPC) call. */
export interface Services {
  accounts: AccountService;
  admin: AdminService;
  limits: LimitPolicy;
  lookup: LookupService;
  domains: DomainService;
  ingest: IngestService;
  streams: StreamService;
  exports: ExportService;
  /** Validates and runs an export job an operator asked for, one at a time with the scheduled ones. */
  runExportJob(request: ManualJobRequest): Promise<Snapshot[]>;
  health(): Promise<HealthReport>;
  /** The data lookups answer from now: versions and counts (operators only). */
  dataStatus(): Promise<DataStatus>;
}
