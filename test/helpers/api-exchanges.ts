import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ApiExamples, ApiExchange } from '../../src/http/openapi.ts';
import { HEADERS } from '../../src/http/openapi.ts';
import { runHourly } from '../../src/modules/exports/hourly-snapshot-job.ts';
import { FEED_LIST, FEEDS } from '../../src/modules/feeds/feed-catalog.ts';
import { API_PREFIX, FEED_EXPORT_OPERATIONS, FEED_STREAM_OPERATIONS, OPERATIONS, type Operation } from '../../src/operations.ts';
import { buildTestApp } from './build-test-app.ts';
import { sampleRecords } from './feed-fixtures.ts';
import { openStream } from './stream-client.ts';
import { exportJobsFor } from './export-jobs.ts';

const HOUR_MS = 3_600_000;
/** The headers an example keeps: umbra's own (openapi.ts HEADERS) and those of a redirect. */
const KEPT = [...Object.keys(HEADERS).map((h) => h.toLowerCase()), 'location', 'cache-control'];

/** One answer as the OpenAPI test reads it: the exchange, plus its media type (not kept in examples). */
export interface Answered extends ApiExchange {
  contentType: string | undefined;
}

const kept = (headers: Record<string, string | string[] | number | undefined>, status: number): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const name of KEPT) {
    // Cache-Control is part of the contract of a redirect only.
    if (name === 'cache-control' && status !== 307) continue;
    const v = headers[name];
    if (v !== undefined) out[name] = Array.isArray(v) ? v.join(', ') : String(v);
  }
  return out;
};

/**
 * Calls every /api/v4 operation of a test app on the test dataset, as a client would, and returns what
 * was sent and answered, by operation id: a success for each (records ingested, snapshots exported and
 * streams opened first, so none answers empty) and typical refusals. scripts/capture-api-examples.ts
 * keeps these as the examples of the OpenAPI document; test/integration/http/openapi.test.ts holds the
 * document against a fresh run.
 */
export async function captureExchanges(t: TestContext): Promise<Record<string, Answered[]>> {
  // A fixed signing key and request ids: captured again, the examples change only where answers did.
  const app = await buildTestApp(t, {}, { UMBRA_SIGNING_KEYS: 'k0:examples-signing-secret-not-for-production' });
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.http.server.address() as { port: number }).port;
  const { key } = await app.team({ name: 'Example Team', credits: 10_000 });
  const out: Record<string, Answered[]> = {};

  const call = async (
    op: Operation,
    name: string,
    request: ApiExchange['request'],
    headers: Record<string, string> = { 'x-api-key': key },
  ): Promise<void> => {
    const given = { ...headers, 'x-request-id': `example-${op.id}-${name}` };
    const res = await app.http.inject({
      method: request.method,
      url: request.url,
      headers: request.body === undefined ? given : { ...given, 'content-type': 'application/json' },
      ...(request.body === undefined ? {} : { payload: JSON.stringify(request.body) }),
    });
    const contentType = res.headers['content-type'] as string | undefined;
    (out[op.id] ??= []).push({
      name,
      request,
      status: res.statusCode,
      headers: kept(res.headers, res.statusCode),
      ...(res.body === '' ? {} : { body: res.json() }),
      contentType,
    });
  };
  const noKey = {};

  // Records of every feed: an hour ago (exported below) and now (for the domain lookup).
  const now = app.clock.now();
  const hourStart = Math.floor(now / HOUR_MS) * HOUR_MS - HOUR_MS;
  for (const at of [hourStart + 60_000, now]) {
    const records = sampleRecords(at);
    for (const feed of FEED_LIST) {
      const s = await app.services.ingest.ingest(feed, [[{ n: 1, value: records[feed.id] }]]);
      if (s.accepted !== 1) throw new Error(`sample ${feed.id} record refused: ${JSON.stringify(s.errors)}`);
    }
  }
  const jobs = await exportJobsFor(t, app);
  for (const feed of FEED_LIST) await runHourly(jobs, feed.id, hourStart);

  const get = (path: string, params?: Record<string, string>, query?: Record<string, string>): ApiExchange['request'] => {
    const search = query ? `?${new URLSearchParams(query)}` : '';
    return { method: 'GET', url: `${API_PREFIX}${path}${search}`, ...(params ? { params } : {}), ...(query ? { query } : {}) };
  };

  await call(OPERATIONS.health, 'healthy', get('/health'), noKey);
  await call(OPERATIONS.accountMe, 'account', get('/account/me'));
  await call(OPERATIONS.accountMe, 'no-key', get('/account/me'), noKey);
  await call(OPERATIONS.lookupIp, 'ipv4', get('/lookup/ip/8.8.8.8', { ip_address: '8.8.8.8' }));
  await call(OPERATIONS.lookupIp, 'explained', get('/lookup/ip/109.176.45.49', { ip_address: '109.176.45.49' }, { explain: 'true' }));
  await call(OPERATIONS.lookupIp, 'bad-explain', get('/lookup/ip/8.8.8.8', { ip_address: '8.8.8.8' }, { explain: 'yes' }));
  await call(OPERATIONS.lookupIp, 'bad-address', get('/lookup/ip/300.1.1.1', { ip_address: '300.1.1.1' }));
  await call(OPERATIONS.lookupIps, 'batch', {
    method: 'POST',
    url: `${API_PREFIX}/lookup/ips`,
    body: { ips: ['8.8.8.8', '2001:4860:4860::8888', 'nope'] },
  });
  await call(OPERATIONS.lookupIps, 'not-a-list', { method: 'POST', url: `${API_PREFIX}/lookup/ips`, body: { ips: '8.8.8.8' } });
  // The domain aggregates learn from the feed log in the background: wait (bounded) until they have the records.
  for (let i = 0; i < 50; i++) {
    const seen = await app.http.inject({ url: `${API_PREFIX}/lookup/domain/acme-logistics.com`, headers: { 'x-api-key': key } });
    if (seen.json().data?.stats?.total_events_30d > 0) break;
    await sleep(100);
  }
  await call(OPERATIONS.lookupDomain, 'domain', get('/lookup/domain/acme-logistics.com', { domain: 'acme-logistics.com' }, { limit: '5' }));
  await call(
    OPERATIONS.lookupDomain,
    'bad-limit',
    get('/lookup/domain/acme-logistics.com', { domain: 'acme-logistics.com' }, { limit: '0' }),
  );

  const date = new Date(hourStart).toISOString().slice(0, 10);
  const hour = String(new Date(hourStart).getUTCHours());
  for (const feed of FEED_LIST) {
    const ops = FEED_EXPORT_OPERATIONS[feed.id];
    const base = `/feeds/${feed.segment}/export`;
    await call(ops.list, 'first-page', get(base, undefined, { limit: '1' }));
    await call(ops.list, 'bad-limit', get(base, undefined, { limit: 'all' }));
    await call(ops.download, 'latest', get(`${base}/latest`, { date: 'latest' }));
    await call(ops.download, 'nothing-that-day', get(`${base}/2026-01-01`, { date: '2026-01-01' }));
    await call(ops.meta, 'latest', get(`${base}/latest/meta`, { date: 'latest' }));
    await call(ops.hourDownload, 'hour', get(`${base}/${date}/${hour}`, { date, hour }));
    await call(ops.hourMeta, 'hour', get(`${base}/${date}/${hour}/meta`, { date, hour }));
    await call(ops.hourMeta, 'no-key', get(`${base}/${date}/${hour}/meta`, { date, hour }), noKey);
  }

  for (const feed of FEED_LIST) {
    const op = FEED_STREAM_OPERATIONS[feed.id];
    const path = `${API_PREFIX}/feeds/${feed.segment}/stream`;
    const stream = await openStream(port, path, key);
    const record = sampleRecords(app.clock.now())[feed.id];
    await app.services.ingest.ingest(FEEDS[feed.id], [[{ n: 1, value: record }]]);
    const [first] = await stream.records(1);
    stream.close();
    const contentType = stream.headers['content-type'];
    (out[op.id] ??= []).push({
      name: 'record',
      request: { method: 'GET', url: path },
      status: stream.status,
      headers: kept(stream.headers, stream.status),
      body: first,
      contentType,
    });
    await call(op, 'no-key', { method: 'GET', url: path }, noKey);
  }
  return out;
}

/** The exchanges as the document keeps them: no media type (the document declares it). */
export function asExamples(answered: Record<string, Answered[]>): ApiExamples {
  return Object.fromEntries(Object.entries(answered).map(([id, xs]) => [id, xs.map(({ contentType: _, ...x }) => x)]));
}
