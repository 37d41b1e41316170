import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/lib/logger.ts';
import { runRollup } from '../../../src/modules/exports/daily-rollup-job.ts';
import { FEEDS } from '../../../src/modules/feeds/feed-catalog.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';
import { rawExchange } from '../../helpers/raw-http.ts';
import { exportJobsFor } from '../../helpers/export-jobs.ts';

const H = 3_600_000;
const NOW = Date.UTC(2026, 10, 22, 12);

function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, unknown>; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, bytes }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('secrets in logs', () => {
  it('should never log the signature of a presigned download URL, on any path that logs a request', async (t) => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        done();
      },
    });
    // trace: every line any component would write (fastify's own client-error and request logs included).
    const app = await buildTestApp(t, { logger: createLogger('trace', sink) });
    const { key } = await app.team();
    const base = sampleRecords(NOW).anonymizers;
    const day = Date.UTC(2026, 10, 21);
    const items = [1, 2, 3].map((n) => ({
      n,
      value: { ...base, range_start: `10.0.${n}.0`, range_end: `10.0.${n}.255`, timestamp: Math.floor((day + 7 * H + n * 1000) / 1000) },
    }));
    assert.equal((await app.services.ingest.ingest(FEEDS.anonymizers, [items])).accepted, 3);
    await runRollup(await exportJobsFor(t, app), 'anonymizers', '2026-11-21');
    await app.http.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.http.server.address() as { port: number }).port;

    const redirect = await get(port, '/api/v4/feeds/anonymizers/export/2026-11-21', { 'x-api-key': key });
    assert.equal(redirect.status, 307);
    // Absolute, on the Host asked for; a client following it requests its path and query.
    const absolute = new URL(redirect.headers.location as string);
    assert.equal(absolute.origin, `http://127.0.0.1:${port}`);
    const location = `${absolute.pathname}${absolute.search}`;
    const sig = absolute.searchParams.get('sig')!;
    assert.ok(sig.length >= 20, 'the URL carries a signature');

    // The real download, a forged one, the same URL on an unknown path and with a method it refuses,
    // and a request the HTTP parser rejects (its raw bytes hold the URL).
    const file = await get(port, location);
    assert.equal(file.status, 200);
    assert.ok(file.bytes > 0);
    const forged = location.replace(`kid=`, `kid=x`);
    assert.equal((await get(port, forged)).status, 403);
    assert.equal((await get(port, location.replace('/downloads', '/downloadz'))).status, 404);
    const amz = `/downloads?X-Amz-Credential=${sig}c&X-Amz-Security-Token=${sig}t&X-Amz-Signature=${sig}s&signature=${sig}g&api_key=${sig}k`;
    assert.equal((await get(port, amz)).status, 403);
    const bad = await rawExchange(port, `GET ${location} HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n`);
    assert.equal(bad.status, 400);
    app.logger.flush();
    await new Promise((r) => setTimeout(r, 50));

    const all = lines.join('\n');
    assert.ok(lines.length >= 5, 'the requests were logged');
    assert.equal(all.includes(sig), false, 'the signature appears nowhere in the logs');
    assert.equal(all.includes('rawPacket'), false, "not even as the parser's raw bytes");
    const access = lines.map((l) => JSON.parse(l)).filter((e) => e.msg === 'request');
    const download = access.find((e) => e.status === 200 && e.url.startsWith('/downloads?'));
    assert.ok(download, 'the download has its access line');
    // The path and the harmless members stay readable; the signature-like ones are redacted.
    assert.match(
      download.url,
      /^\/downloads\?object=anonymizers%2F2026%2F11%2F21%2Fanonymizers\.parquet&sha256=[0-9a-f]{64}&expires=\d+&kid=[^&]+&sig=\[redacted\]$/,
      'which file was downloaded stays readable',
    );
    const amzLine = access.find((e) => e.url.includes('X-Amz-Signature'));
    assert.equal(
      amzLine?.url,
      '/downloads?X-Amz-Credential=[redacted]&X-Amz-Security-Token=[redacted]&X-Amz-Signature=[redacted]&signature=[redacted]&api_key=[redacted]',
    );
  });
});
