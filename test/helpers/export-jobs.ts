import type { TestContext } from 'node:test';
import { join } from 'node:path';
import type { Clock } from '../../src/lib/clock.ts';
import type { ExportJobDeps } from '../../src/modules/exports/export-job.ts';
import { ParquetWriter } from '../../src/modules/exports/parquet-writer.ts';
import type { TestApp } from './build-test-app.ts';

/** What the export jobs need to write a test app's snapshots, on its own stores; the writer closes with the test. */
export async function exportJobsFor(t: TestContext, app: TestApp, clock: Clock = app.clock): Promise<ExportJobDeps> {
  const writer = await ParquetWriter.create({ threads: 1 });
  t.after(() => writer.close());
  return {
    feedLog: app.stores.feedLog,
    store: app.stores.objects,
    catalog: app.stores.snapshots,
    writer,
    clock,
    workDir: join(app.config.dataDir, 'work'),
  };
}
