import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { runRollup } from '../../../src/modules/exports/daily-rollup-job.ts';
import { FEEDS } from '../../../src/modules/feeds/feed-catalog.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';
import { grpcClient } from '../../helpers/grpc-client.ts';
import { exportJobsFor } from '../../helpers/export-jobs.ts';

const NOW = Date.UTC(2026, 10, 22, 12);
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** Both ports listening, a daily anonymizers snapshot downloaded through umbra. */
async function served(t: TestContext, env: Record<string, string> = {}) {
  const app = await buildTestApp(t, {}, env);
  const { key } = await app.team();
  const base = sampleRecords(NOW).anonymizers;
  const items = [1, 2].map((n) => ({
    n,
    value: { ...base, range_start: `10.0.${n}.0`, range_end: `10.0.${n}.255`, timestamp: Math.floor(Date.UTC(2026, 10, 21, 7) / 1000) + n },
  }));
  assert.equal((await app.services.ingest.ingest(FEEDS.anonymizers, [items])).accepted, 2);
  const jobs = await exportJobsFor(t, app);
  const snapshot = await runRollup(jobs, 'anonymizers', '2026-11-21');
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  const httpPort = (app.http.server.address() as { port: number }).port;
  const grpcPort = await app.grpc.listen('127.0.0.1', 0);
  const url = async (authority?: string): Promise<string> => {
    const client = grpcClient(grpcPort, { authority });
    t.after(() => client.close());
    const answer = await client.unary('GetExportSnapshotURL', { feed: 'anonymizers', date: '2026-11-21' }, key);
    assert.equal(answer.error, undefined, answer.error?.details);
    return answer.value.url as string;
  };
  return { app, key, httpPort, grpcPort, snapshot, url };
}

describe('GetExportSnapshotURL', () => {
  it("should answer an absolute URL on the :authority's host and the HTTP port, which serves the file, when no public URL is set", async (t) => {
    const { httpPort, snapshot, url } = await served(t);
    const got = new URL(await url());
    assert.equal(got.origin, `http://127.0.0.1:${httpPort}`, 'the HTTP port serves downloads, not the gRPC one');
    assert.equal(got.pathname, '/downloads');
    const file = await fetch(got);
    assert.equal(file.status, 200);
    assert.equal(sha(new Uint8Array(await file.arrayBuffer())), snapshot.checksum);
    // A client that dialled another name for this server.
    assert.ok((await url('intel.example.com:50051')).startsWith(`http://intel.example.com:${httpPort}/downloads?object=`));
  });

  it('should answer a URL under UMBRA_PUBLIC_URL, path prefix included, the same URL as the HTTP Location', async (t) => {
    const { app, key, url } = await served(t, { UMBRA_PUBLIC_URL: 'https://x.example/umbra' });
    const got = await url('umbra-node-3.internal:50051');
    assert.ok(got.startsWith('https://x.example/umbra/downloads?object='), got);
    const http = await app.http.inject({ url: '/api/v4/feeds/anonymizers/export/2026-11-21', headers: { 'x-api-key': key } });
    assert.equal(http.statusCode, 307);
    assert.equal(http.headers.location, got);
  });
});
