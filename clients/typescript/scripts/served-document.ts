import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildApp } from '../../../src/app.ts';
import { parseConfig } from '../../../src/config.ts';
import { ManualClock } from '../../../src/lib/clock.ts';
import { createLogger } from '../../../src/lib/logger.ts';
import { createStores } from '../../../src/storage/index.ts';
import { tinyDataset } from '../../../test/helpers/tiny-dataset.ts';

/**
 * The OpenAPI document exactly as umbra serves it at /api/v4/openapi.json, from an app built in
 * process (the document depends on the routes, not on data or configuration).
 */
export async function servedDocument(): Promise<unknown> {
  const dataDir = mkdtempSync(join(tmpdir(), 'umbra-client-gen-'));
  const config = { ...parseConfig({ UMBRA_LOG_LEVEL: 'silent', UMBRA_DATA_DIR: dataDir }), sqliteFile: ':memory:' };
  const clock = new ManualClock();
  const app = await buildApp(config, {
    dataset: tinyDataset,
    stores: await createStores(config, clock),
    logger: createLogger('silent'),
    clock,
  });
  try {
    const res = await app.http.inject({ url: '/api/v4/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`openapi.json answered ${res.statusCode}`);
    return res.json();
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
