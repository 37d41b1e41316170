import type { Command } from 'commander';
import { parseConfig, type Config } from '../config.ts';
import { systemClock } from '../lib/clock.ts';
import { nodeKeyCrypto } from '../lib/key-crypto.ts';
import { AdminService } from '../modules/accounts/admin-service.ts';
import { type AdminStores, createAdminStores, createStores, type Stores } from '../storage/index.ts';
import { createOutput, EXIT, reportFailure, type Output } from './output.ts';

export interface GlobalOptions {
  json?: boolean;
  dataDir?: string;
  httpPort?: string;
  grpcPort?: string;
  grpcTlsCert?: string;
  grpcTlsKey?: string;
  host?: string;
}

/** Environment first, flags over it. */
export function configFrom(opts: GlobalOptions): Config {
  return parseConfig(process.env, {
    UMBRA_DATA_DIR: opts.dataDir,
    UMBRA_HTTP_PORT: opts.httpPort,
    UMBRA_GRPC_PORT: opts.grpcPort,
    UMBRA_GRPC_TLS_CERT: opts.grpcTlsCert,
    UMBRA_GRPC_TLS_KEY: opts.grpcTlsKey,
    UMBRA_HOST: opts.host,
  });
}

/** Holds the exit code of the verb that ran. */
export const outcome = { code: EXIT.OK as number };

/** Runs one verb: output per --json, failures to an exit code (a verb that returns nothing exits 0). */
export function action<A extends unknown[]>(fn: (out: Output, config: () => Config, ...args: A) => Promise<unknown>) {
  return async (...args: unknown[]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const opts = cmd.optsWithGlobals<GlobalOptions>();
    const out = createOutput(Boolean(opts.json));
    try {
      const code = await fn(out, () => configFrom(opts), ...(args.slice(0, -1) as A));
      outcome.code = typeof code === 'number' ? code : EXIT.OK;
    } catch (e) {
      outcome.code = reportFailure(out, e);
    }
  };
}

/** Faults the stores ride out, as lines on stderr (a CLI verb has no log file). */
export const cliStoreLog = {
  warn: (obj: object, msg: string) => process.stderr.write(`umbra: ${msg} ${JSON.stringify(obj)}\n`),
  info: () => {},
  error: (obj: object, msg: string) => process.stderr.write(`umbra: ${msg} ${JSON.stringify(obj)}\n`),
};

/** A CLI verb waits this long for a database lock another process holds (the server's limit is 2 s). */
export const CLI_BUSY_DEADLINE_MS = 10_000;

/** The stores a CLI verb works on. */
export const cliStores = (config: Config): Promise<Stores> => createStores(config, systemClock, cliStoreLog, CLI_BUSY_DEADLINE_MS);

/** The admin service on the configured store; the store is closed when `use` finishes. */
export async function withAdmin<T>(config: Config, use: (admin: AdminService, stores: AdminStores) => Promise<T>): Promise<T> {
  const stores = await createAdminStores(config, systemClock, cliStoreLog, CLI_BUSY_DEADLINE_MS);
  try {
    return await use(new AdminService(stores.accounts, stores.limits, stores.ledger, nodeKeyCrypto, systemClock), stores);
  } finally {
    await stores.close();
  }
}
