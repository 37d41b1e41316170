import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { buildApp, type App, type AppDeps } from '../../src/app.ts';
import { parseConfig, type Config } from '../../src/config.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { createLogger } from '../../src/lib/logger.ts';
import { SCOPES, type Scope } from '../../src/modules/accounts/scopes.ts';
import { createStores, type Stores } from '../../src/storage/index.ts';
import { tinyDataset } from './tiny-dataset.ts';

export interface TestApp extends App {
  clock: ManualClock;
  config: Config;
  /** Creates a team and a key; returns the secret and ids. */
  team(options?: {
    name?: string;
    credits?: number;
    scopes?: Scope[];
    maxStreams?: number;
  }): Promise<{ orgId: string; key: string; keyId: string }>;
  /** Adds another key to an existing team. */
  key(orgId: string, scopes?: Scope[]): Promise<{ key: string; keyId: string }>;
}

let teams = 0;

/**
 * A full app on an in-memory embedded store with a manual clock, closed when the test ends. `stores`
 * may replace some of the embedded stores (built on the app's clock) before the app is wired.
 */
export async function buildTestApp(
  t: TestContext,
  deps: Partial<AppDeps> = {},
  env: Record<string, string> = {},
  stores: (made: Stores, clock: ManualClock) => Stores = (made) => made,
): Promise<TestApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'umbra-test-'));
  const config = { ...parseConfig({ UMBRA_LOG_LEVEL: 'silent', UMBRA_DATA_DIR: dataDir, ...env }), sqliteFile: ':memory:' };
  const clock = (deps.clock as ManualClock | undefined) ?? new ManualClock();
  const app = await buildApp(config, {
    dataset: tinyDataset,
    stores: stores(await createStores(config, clock), clock),
    logger: createLogger('silent'),
    ...deps,
    clock,
  });
  t.after(async () => {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const key = async (orgId: string, scopes: Scope[] = [...SCOPES]) => {
    const made = await app.services.admin.createKey({ org: orgId, email: `m${++teams}@example.test`, scopes });
    return { key: made.secret, keyId: made.key.id };
  };
  return {
    ...app,
    clock,
    config,
    key,
    team: async (options = {}) => {
      const org = await app.services.admin.createOrg({
        name: options.name ?? `team-${++teams}`,
        credits: options.credits ?? 100_000,
        maxStreams: options.maxStreams,
      });
      return { orgId: org.id, ...(await key(org.id, options.scopes)) };
    },
  };
}
