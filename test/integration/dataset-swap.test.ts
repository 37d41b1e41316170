import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { mulberry32 } from '../../src/lib/prng.ts';
import { dataVersion } from '../../src/modules/lookup/data-version.ts';
import { loadDataset } from '../../src/modules/dataset/dataset-reader.ts';
import { ensureRealDataset } from '../helpers/test-dataset.ts';
import { buildTestApp } from '../helpers/build-test-app.ts';
import { restampDataset } from '../helpers/dataset-files.ts';
import { lookupLoad } from '../helpers/lookup-load.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('swapping a rebuilt IP dataset into a serving app', () => {
  it('should keep answering during the swap with zero errors, each answer from one whole version, the event loop never held', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-swap-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const file = join(dir, 'ip-dataset.bin');
    copyFileSync(await ensureRealDataset(), file);
    const syncStarted = performance.now();
    const first = loadDataset(file);
    const syncLoadMs = performance.now() - syncStarted;
    const app = await buildTestApp(t, { dataset: first, datasetFile: file, datasetRefreshMs: 3_600_000 });
    const { key, orgId } = await app.team({ credits: 10_000_000 });
    await app.services.admin.setLimit(orgId, 'lookup', { rate: 1e6, burst: 1e6 });
    await app.http.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.http.server.address() as { port: number }).port;
    const random = mulberry32(7);
    const ips = Array.from({ length: 5_000 }, () =>
      [1 + Math.floor(random() * 222), 0, 0, 0].map((o, i) => (i === 0 ? o : Math.floor(random() * 256))).join('.'),
    );

    const oldVersion = dataVersion(first.info, []).header;
    const newBuild = first.info.built_at + 3_600;
    const newVersion = dataVersion({ ...first.info, built_at: newBuild }, []).header;
    assert.notEqual(oldVersion, newVersion);

    const load = lookupLoad(port, key, ips, 4);
    await sleep(500);
    // A rebuild lands as `umbra data build` lands it: a complete file renamed into place.
    restampDataset(file, file, newBuild);
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    const started = performance.now();
    await app.reloadDataset();
    const swapMs = performance.now() - started;
    loop.disable();
    await sleep(300);
    const perConnection = await load.stop();

    const all = perConnection.flat();
    assert.ok(all.length > 200, `load ran (${all.length} requests)`);
    assert.deepEqual(
      all.filter((s) => s.status !== 200).map((s) => s.status),
      [],
      'no request failed during the swap',
    );
    for (const samples of perConnection) {
      const versions = samples.map((s) => s.version);
      assert.ok(
        versions.every((v) => v === oldVersion || v === newVersion),
        'every answer names one of the two versions',
      );
      const firstNew = versions.indexOf(newVersion);
      assert.ok(firstNew > 0, 'each connection saw the old version, then the new one');
      assert.ok(
        versions.slice(firstNew).every((v) => v === newVersion),
        'never the old version again after the new one',
      );
    }
    assert.equal(app.lookupData.view().version.header, newVersion);
    // Loading the file on the event loop holds it for the whole load (about half a second on a quiet
    // machine); the worker does it off the loop. Compared with that load measured here, on this machine
    // now, so a busy machine slows both sides.
    const heldMs = loop.max / 1e6;
    assert.ok(
      heldMs < syncLoadMs / 2,
      `event loop held ${Math.round(heldMs)} ms during a ${Math.round(swapMs)} ms swap (a load on the loop: ${Math.round(syncLoadMs)} ms)`,
    );

    // A damaged file is refused: the server keeps the dataset it has and says so in the metrics.
    writeFileSync(`${file}.tmp`, 'not a dataset');
    copyFileSync(`${file}.tmp`, file);
    await app.reloadDataset();
    assert.equal(app.lookupData.view().version.header, newVersion);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(metrics, /umbra_dataset_reloads_total\{outcome="refused"\} 1/);
    assert.match(metrics, /umbra_dataset_reloads_total\{outcome="swapped"\} 1/);
    assert.match(metrics, new RegExp(`umbra_dataset_built_timestamp_seconds ${newBuild}`));
  });
});
