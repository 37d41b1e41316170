import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { runRollup } from '../../../src/modules/exports/daily-rollup-job.ts';
import { runHourly } from '../../../src/modules/exports/hourly-snapshot-job.ts';
import { FEEDS } from '../../../src/modules/feeds/feed-catalog.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';
import { rawExchange } from '../../helpers/raw-http.ts';
import { exportJobsFor } from '../../helpers/export-jobs.ts';

const NOW = Date.UTC(2026, 10, 22, 12);
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** A served app (a real socket) with a daily and an hourly anonymizers snapshot, downloads through umbra. */
async function served(t: TestContext, env: Record<string, string> = {}) {
  const app = await buildTestApp(t, {}, env);
  const { key } = await app.team();
  const base = sampleRecords(NOW).anonymizers;
  const ingest = async (hourMs: number) => {
    const items = [1, 2, 3].map((n) => ({
      n,
      value: { ...base, range_start: `10.0.${n}.0`, range_end: `10.0.${n}.255`, timestamp: Math.floor((hourMs + n * 1000) / 1000) },
    }));
    assert.equal((await app.services.ingest.ingest(FEEDS.anonymizers, [items])).accepted, 3);
  };
  const jobs = await exportJobsFor(t, app);
  await ingest(Date.UTC(2026, 10, 21, 7));
  const daily = await runRollup(jobs, 'anonymizers', '2026-11-21');
  await ingest(Date.UTC(2026, 10, 22, 3));
  const hourly = await runHourly(jobs, 'anonymizers', Date.UTC(2026, 10, 22, 3));
  assert.equal(app.services.exports.downloadsVia, 'umbra');
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.http.server.address() as { port: number }).port;
  return { app, key, port, daily, hourly };
}

/** GET on the server with the given headers (Host included when given); status, Location and body. */
function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; location?: string; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const DAILY = '/api/v4/feeds/anonymizers/export/2026-11-21';
const HOURLY = '/api/v4/feeds/anonymizers/export/2026-11-22/3';

describe('absolute download URLs over HTTP', () => {
  it('should answer the 307 with an absolute Location on the Host asked for, which serves the file, when no public URL is set', async (t) => {
    const { key, port, daily, hourly } = await served(t);
    for (const [path, snapshot] of [
      [DAILY, daily],
      [HOURLY, hourly],
    ] as const) {
      const res = await get(port, path, { 'x-api-key': key });
      assert.equal(res.status, 307);
      const location = new URL(res.location!);
      assert.equal(res.location, `http://127.0.0.1:${port}/downloads${location.search}`, 'absolute, on the Host node sent');
      const file = await fetch(location);
      assert.equal(file.status, 200);
      assert.equal(sha(new Uint8Array(await file.arrayBuffer())), snapshot.checksum);
    }
    // Another name for the same server: the Location follows it.
    const named = await get(port, DAILY, { 'x-api-key': key, host: 'intel.example.com:8443' });
    assert.match(named.location!, /^http:\/\/intel\.example\.com:8443\/downloads\?object=/);
  });

  it('should not take X-Forwarded-Host or -Proto from a client, nor put a Host that is not host[:port] into the Location', async (t) => {
    const { key, port } = await served(t);
    const forwarded = await get(port, DAILY, {
      'x-api-key': key,
      host: 'intel.example.com',
      'x-forwarded-host': 'evil.example',
      'x-forwarded-proto': 'https',
    });
    assert.match(forwarded.location!, /^http:\/\/intel\.example\.com\/downloads\?/);
    // A Host that is no host name: the address the connection reached instead.
    const odd = await get(port, DAILY, { 'x-api-key': key, host: 'evil.example/x?y=' });
    assert.match(odd.location!, new RegExp(`^http://127\\.0\\.0\\.1:${port}/downloads\\?`));
    // HTTP/1.0 without a Host at all.
    const old = await rawExchange(port, `GET ${DAILY} HTTP/1.0\r\nx-api-key: ${key}\r\n\r\n`);
    assert.equal(old.status, 307);
    assert.match(old.headers.location!, new RegExp(`^http://127\\.0\\.0\\.1:${port}/downloads\\?`));
  });

  it('should put every Location under UMBRA_PUBLIC_URL, path prefix included, whatever Host the proxy sent', async (t) => {
    const { app, key, port, daily, hourly } = await served(t, { UMBRA_PUBLIC_URL: 'https://x.example/umbra/' });
    assert.equal(app.config.publicUrl, 'https://x.example/umbra');
    for (const [path, snapshot] of [
      [DAILY, daily],
      [HOURLY, hourly],
    ] as const) {
      const res = await get(port, path, { 'x-api-key': key, host: 'umbra-node-3.internal:8080' });
      assert.equal(res.status, 307);
      const prefix = 'https://x.example/umbra/downloads?';
      assert.ok(res.location!.startsWith(prefix), res.location);
      // The proxy strips /umbra: what reaches umbra is /downloads?…, and it serves the file.
      const file = await get(port, `/downloads?${res.location!.slice(prefix.length)}`);
      assert.equal(file.status, 200);
      assert.equal(sha(file.body), snapshot.checksum);
    }
  });
});
