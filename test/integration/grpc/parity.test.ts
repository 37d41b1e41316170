import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { STATUS } from '../../../src/errors.ts';
import { packageDefinition, SERVICE_NAME } from '../../../src/proto.ts';
import { runRollup } from '../../../src/modules/exports/daily-rollup-job.ts';
import { runHourly } from '../../../src/modules/exports/hourly-snapshot-job.ts';
import { BUCKETS } from '../../../src/modules/ratelimit/buckets.ts';
import { FEED_LIST, FEEDS, type FeedDef } from '../../../src/modules/feeds/feed-catalog.ts';
import { ALL_OPERATIONS, FEED_EXPORT_OPERATIONS, FEED_STREAM_OPERATIONS, OPERATIONS, type Operation } from '../../../src/operations.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';
import { dropNulls, grpcClient, grpcToJson, type GrpcTestClient } from '../../helpers/grpc-client.ts';
import { exportJobsFor } from '../../helpers/export-jobs.ts';
import { loadDataset } from '../../../src/modules/dataset/dataset-reader.ts';
import { routedAddresses, routedBatches } from '../../helpers/routed-addresses.ts';
import { ensureRealDataset } from '../../helpers/test-dataset.ts';

const H = 3_600_000;
// The test clock's start: 2026-11-22 12:00 UTC.
const TODAY = Date.UTC(2026, 10, 22);

type Who = 'key' | 'none' | 'noScope' | 'broke';

/** One request, written for both transports. */
interface Case {
  name: string;
  who: Who;
  http: { method: 'GET' | 'POST'; url: string; body?: unknown };
  grpc: { method: string; request: object };
  unit?: 's' | 'ms';
}

const httpStatusOf = (code: number) => Object.values(STATUS).find((r) => r.grpc === code)?.http;

/** The cases of one operation: its happy path(s), its denials and its bad inputs. */
function casesFor(op: Operation): Case[] {
  const c = (name: string, who: Who, url: string, grpc: Case['grpc'], body?: unknown): Case => ({
    name: `${op.id} ${name}`,
    who,
    http: { method: op.method, url: `/api/v4${url}`, body },
    grpc,
  });
  const denials = (url: string, grpc: Case['grpc'], body?: unknown) => [
    c('without key', 'none', url, grpc, body),
    c('without scope', 'noScope', url, grpc, body),
  ];
  switch (op) {
    case OPERATIONS.accountMe: {
      const g = { method: 'GetAccountInfo', request: {} };
      return [c('ok', 'key', '/account/me', g), ...denials('/account/me', g)];
    }
    case OPERATIONS.lookupIp: {
      const g = (ip: string, explain?: boolean) => ({
        method: 'LookupIP',
        request: explain === undefined ? { ip_address: ip } : { ip_address: ip, explain },
      });
      return [
        ...['8.8.8.8', '2001:4860:4860::8888', '::ffff:8.8.4.4', '10.1.2.3'].map((ip) => c(ip, 'key', `/lookup/ip/${ip}`, g(ip))),
        // The exports fixture's records give these addresses intelligence: a proxy and JA4T sighting,
        // an exploit attempt with a scanner's User-Agent, an anonymizer range.
        ...['109.176.45.49', '203.0.113.7', '185.220.101.9', '8.8.8.8'].map((ip) =>
          c(`${ip} explained`, 'key', `/lookup/ip/${ip}?explain=true`, g(ip, true)),
        ),
        c('explain=false', 'key', '/lookup/ip/203.0.113.7?explain=false', g('203.0.113.7', false)),
        c('invalid', 'key', '/lookup/ip/not-an-ip', g('not-an-ip')),
        c('no credits', 'broke', '/lookup/ip/8.8.8.8', g('8.8.8.8')),
        ...denials('/lookup/ip/8.8.8.8', g('8.8.8.8')),
      ];
    }
    case OPERATIONS.lookupIps: {
      const g = (ips: string[]) => ({ method: 'LookupIPs', request: { ips } });
      const batch = ['8.8.8.8', 'bogus', '8.8.8.8', '::ffff:8.8.8.8', '1.1.1.1', '2001:4860:4860::8888'];
      return [
        c('batch with duplicates and invalid entries', 'key', '/lookup/ips', g(batch), { ips: batch }),
        c('nothing valid', 'key', '/lookup/ips', g(['nope']), { ips: ['nope'] }),
        c('too many', 'key', '/lookup/ips', g(Array.from({ length: 1001 }, (_, i) => `10.0.${i >> 8}.${i & 255}`)), {
          ips: Array.from({ length: 1001 }, (_, i) => `10.0.${i >> 8}.${i & 255}`),
        }),
        c('no credits', 'broke', '/lookup/ips', g(['8.8.8.8']), { ips: ['8.8.8.8'] }),
        ...denials('/lookup/ips', g(['8.8.8.8']), { ips: ['8.8.8.8'] }),
      ];
    }
    case OPERATIONS.lookupDomain: {
      const g = (domain: string, limit?: number) => ({
        method: 'LookupDomain',
        request: limit === undefined ? { domain } : { domain, limit },
      });
      return [
        c('with events', 'key', '/lookup/domain/acme-logistics.com', g('acme-logistics.com')),
        c('with limit', 'key', '/lookup/domain/acme-logistics.com?limit=1', g('acme-logistics.com', 1)),
        c('unknown', 'key', '/lookup/domain/never-seen.example', g('never-seen.example')),
        c('bad limit', 'key', '/lookup/domain/acme-logistics.com?limit=0', g('acme-logistics.com', 0)),
        c('bad domain', 'key', '/lookup/domain/a..b', g('a..b')),
        c('no credits', 'broke', '/lookup/domain/acme-logistics.com', g('acme-logistics.com')),
        ...denials('/lookup/domain/acme-logistics.com', g('acme-logistics.com')),
      ];
    }
  }
  const feed = FEED_LIST.find((f) => op.id.startsWith(`feeds.${f.id}.`))!;
  const S = `/feeds/${feed.segment}`;
  const ex = FEED_EXPORT_OPERATIONS[feed.id];
  const list = (q: string, r: object) => ({ method: 'ListExportSnapshots', request: { feed: feed.id, ...r }, q });
  const snap = (method: string, date: string, hour?: number) => ({
    method,
    request: hour === undefined ? { feed: feed.id, date } : { feed: feed.id, date, hour },
  });
  switch (op) {
    case ex.list:
      return [
        c('all', 'key', `${S}/export`, list('', {})),
        c('one per page', 'key', `${S}/export?limit=1`, list('', { limit: 1 })),
        c('limit 0', 'key', `${S}/export?limit=0`, list('', { limit: 0 })),
        c('forged cursor', 'key', `${S}/export?cursor=abc`, list('', { cursor: 'abc' })),
        ...denials(`${S}/export`, list('', {})),
      ];
    case ex.download:
    case ex.meta: {
      const m = op === ex.download ? 'GetExportSnapshotURL' : 'GetExportSnapshotMeta';
      const tail = op === ex.download ? '' : '/meta';
      return [
        c('daily', 'key', `${S}/export/2026-11-20${tail}`, snap(m, '2026-11-20')),
        c('latest', 'key', `${S}/export/latest${tail}`, snap(m, 'latest')),
        c('missing day', 'key', `${S}/export/2026-11-01${tail}`, snap(m, '2026-11-01')),
        c('bad date', 'key', `${S}/export/2026-02-31${tail}`, snap(m, '2026-02-31')),
        ...denials(`${S}/export/2026-11-20${tail}`, snap(m, '2026-11-20')),
      ];
    }
    case ex.hourDownload:
    case ex.hourMeta: {
      const m = op === ex.hourDownload ? 'GetExportSnapshotURL' : 'GetExportSnapshotMeta';
      const tail = op === ex.hourDownload ? '' : '/meta';
      return [
        c('hour 11', 'key', `${S}/export/2026-11-22/11${tail}`, snap(m, '2026-11-22', 11)),
        c('as a listed id', 'key', `${S}/export/2026-11-22/10${tail}`, snap(m, '2026-11-22/10')),
        c('hour 0 padded', 'key', `${S}/export/2026-11-22/00${tail}`, snap(m, '2026-11-22', 0)),
        c('hour 24', 'key', `${S}/export/2026-11-22/24${tail}`, snap(m, '2026-11-22', 24)),
        c('rolled-up or other day', 'key', `${S}/export/2026-11-20/5${tail}`, snap(m, '2026-11-20', 5)),
        ...denials(`${S}/export/2026-11-22/11${tail}`, snap(m, '2026-11-22', 11)),
      ];
    }
  }
  return []; // streams: compared record by record in their own test below
}

/** Both transports make umbra's own download URLs absolute on it, so the URLs compare exactly. */
const PUBLIC_URL = 'https://intel.example.com/umbra';

async function setup(t: TestContext) {
  const app = await buildTestApp(t, {}, { UMBRA_PUBLIC_URL: PUBLIC_URL });
  const port = await app.grpc.listen('127.0.0.1', 0);
  const client = grpcClient(port);
  t.after(() => client.close());
  const { key, orgId } = await app.team({ maxStreams: 20 });
  const broke = await app.team({ credits: 0 });
  // A key of the same team with a scope none of the unary operations needs.
  const { key: noScope } = await app.key(orgId, ['JA4T_STREAM']);
  // The walk makes hundreds of calls at one instant of the manual clock: lift the team's buckets.
  for (const org of [orgId, broke.orgId]) for (const b of BUCKETS) await app.services.admin.setLimit(org, b, { rate: 1e6, burst: 1e6 });
  return { app, client, keys: { key, none: undefined, noScope, broke: broke.key } as Record<Who, string | undefined>, orgId };
}

/** Snapshots for every feed: a daily rollup of 2026-11-20 and hourly snapshots at 10:00 and 11:00 today. */
async function exportsFixture(t: TestContext, app: TestApp): Promise<void> {
  const jobs = await exportJobsFor(t, app);
  for (const feed of FEED_LIST) {
    for (const at of [Date.UTC(2026, 10, 20, 5), TODAY + 10 * H, TODAY + 11 * H]) {
      const s = await app.services.ingest.ingest(feed, [[{ n: 1, value: sampleRecords(at + 60_000)[feed.id] }]]);
      assert.equal(s.accepted, 1, JSON.stringify(s.errors));
    }
    await runRollup(jobs, feed.id, '2026-11-20');
    await runHourly(jobs, feed.id, TODAY + 10 * H);
    await runHourly(jobs, feed.id, TODAY + 11 * H);
  }
}

/**
 * One address with every kind of evidence, for the team `orgId`: a Tor list entry, a deny overlay, a
 * proxy sighting, exploit attempts an hour apart from a Windows browser, a torrent peer, an Android
 * JA4T stack. Returns the address.
 */
async function richAddress(app: TestApp, orgId: string): Promise<string> {
  const ip = '185.220.101.1';
  const now = app.clock.now();
  const s = Math.floor(now / 1000);
  await app.stores.lists.put({
    kind: 'TOR_NODE',
    provider: 'TOR',
    version: '0123456789abcdef',
    imported_at: s - 60,
    published_at: s - 60,
    published_from: 'import',
    format: 'tor-bulk-exit-list',
    cidrs: [`${ip}/32`],
  });
  await app.stores.overlays.add({
    org_id: orgId,
    cidr: '185.220.101.0/24',
    category: 'BOTNET',
    provider: null,
    action: 'deny',
    created_at: s - 30,
  });
  await app.refreshLists();
  const ingest = async (feed: FeedDef, ...values: Record<string, unknown>[]) => {
    const summary = await app.services.ingest.ingest(feed, [values.map((value, i) => ({ n: i + 1, value }))]);
    assert.equal(summary.accepted, values.length, JSON.stringify(summary.errors));
  };
  const samples = sampleRecords(now);
  await ingest(FEEDS.proxies, { ...samples.proxies, ip, timestamp: s - 7200 });
  const browser = {
    'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36',
  };
  const exploit = (at: number) => ({
    ...samples.honeypot_http,
    timestamp: at,
    source_ip: ip,
    details: { method: 'GET', uri: '/.env', version: 'HTTP/1.1', headers: { host: 'mail.acme-logistics.com', ...browser } },
  });
  await ingest(FEEDS.honeypot_http, exploit(now - H + 250), exploit(now));
  await ingest(FEEDS.torrents, { ...samples.torrents, peers: [{ ip, port: 51413, source: 'DHT', encrypted: false }] });
  // Two TCP stacks behind the one address; the exploits' browser User-Agent names no device (a scanner's is fake).
  await ingest(
    FEEDS.ja4t,
    { ...samples.ja4t, ip, ja4t: '65535_2-4-8-1-3_1460_9' },
    { ...samples.ja4t, ip, ja4t: '64240_2-1-3-1-1-4_1460_8' },
  );
  return ip;
}

/** Compares one case over both transports; returns the HTTP status. */
async function compare(app: TestApp, client: GrpcTestClient, keys: Record<Who, string | undefined>, k: Case): Promise<number> {
  const key = keys[k.who];
  const http = await app.http.inject({
    method: k.http.method,
    url: k.http.url,
    headers: key ? { 'x-api-key': key } : {},
    payload: k.http.body as object | undefined,
  });
  const g = await client.unary(k.grpc.method, k.grpc.request, key);
  if (http.statusCode < 400) {
    assert.equal(g.error, undefined, `${k.name}: gRPC failed (${g.error?.code} ${g.error?.details}) where HTTP gave ${http.statusCode}`);
    if (http.statusCode === 307) {
      assert.deepEqual(g.value, { url: http.headers.location }, k.name);
      assert.ok(http.headers.location?.startsWith(`${PUBLIC_URL}/downloads?`), `${k.name}: ${http.headers.location}`);
    } else assert.deepEqual(dropNulls(grpcToJson(g.value, k.unit)), dropNulls(http.json()), k.name);
    for (const h of ['ratelimit-limit', 'x-credits-remaining'] as const)
      assert.equal(g.trailers[h] !== undefined, http.headers[h] !== undefined, `${k.name}: ${h}`);
    return http.statusCode;
  }
  assert.ok(g.error, `${k.name}: gRPC succeeded where HTTP gave ${http.statusCode}`);
  assert.equal(
    httpStatusOf(g.error.code),
    http.statusCode === 402 ? 402 : http.statusCode,
    `${k.name}: gRPC ${g.error.code} for HTTP ${http.statusCode}`,
  );
  const problem = http.json();
  assert.equal(g.error.details, problem.detail, k.name);
  assert.equal(g.trailers['retry-after'], http.headers['retry-after'], `${k.name}: retry-after`);
  return http.statusCode;
}

describe('HTTP and gRPC parity', () => {
  it('should give every keyed HTTP operation its method on example.v1.ExampleService, streaming exactly for streams', () => {
    const service = packageDefinition()[SERVICE_NAME] as Record<string, { responseStream: boolean; requestStream: boolean }>;
    const mirrored = new Set<string>();
    for (const op of ALL_OPERATIONS) {
      if (op.scope === null) continue; // the health probe is HTTP only
      assert.ok(op.grpc, `${op.id} has no gRPC method`);
      const method = service[op.grpc];
      assert.ok(method, `${op.id}: ${op.grpc} is not in the proto`);
      assert.equal(method.responseStream, op.bucket === 'stream', op.id);
      assert.equal(method.requestStream, false, op.id);
      mirrored.add(op.grpc);
    }
    // And the proto has nothing the operations table does not know about.
    assert.deepEqual([...mirrored].sort(), Object.keys(service).sort());
    assert.equal(FEED_STREAM_OPERATIONS.ja4t.grpc, 'StreamJA4T');
  });

  it('should answer every operation alike for the same key, for every feed: bodies, URLs, codes and details', async (t) => {
    const { app, client, keys } = await setup(t);
    await exportsFixture(t, app);
    let walked = 0;
    for (const op of ALL_OPERATIONS) {
      if (op.scope === null || op.bucket === 'stream') continue;
      const cases = casesFor(op);
      assert.ok(cases.length >= 3, `${op.id} has no parity cases`);
      const statuses = new Set<number>();
      for (const k of cases) statuses.add(await compare(app, client, keys, k));
      // Each operation was compared on a success as well as on its 401 and 403.
      assert.ok(
        [200, 307].some((c) => statuses.has(c)),
        `${op.id}: no case succeeded (${[...statuses]})`,
      );
      assert.ok(statuses.has(401) && statuses.has(403), op.id);
      walked++;
    }
    // 4 core operations and 5 export operations of each of the 8 feeds.
    assert.equal(walked, 4 + 5 * FEED_LIST.length);
  });

  it('should explain an address with lists, an overlay, feed sightings, behaviours and devices alike, at the same price', async (t) => {
    const { app, client, keys, orgId } = await setup(t);
    const ip = await richAddress(app, orgId);
    const http = await app.http.inject({ url: `/api/v4/lookup/ip/${ip}?explain=true`, headers: { 'x-api-key': keys.key! } });
    assert.equal(http.statusCode, 200);
    const g = await client.unary('LookupIP', { ip_address: ip, explain: true }, keys.key);
    assert.equal(g.error, undefined);
    assert.deepEqual(dropNulls(grpcToJson(g.value)), dropNulls(http.json()));

    // The comparison above is only as strong as the evidence is rich: every kind of source is there.
    const evidence = http.json().evidence;
    const kinds = (group: Array<{ sources: Array<{ source: string }> }>) =>
      [...new Set(group.flatMap((x) => x.sources.map((s) => s.source)))].sort();
    assert.deepEqual(kinds(evidence.categories), ['feed', 'list', 'overlay']);
    assert.deepEqual(
      evidence.behavior.map((b: { behavior: string }) => b.behavior),
      ['MALICIOUS_TRAFFIC', 'TORRENTING'],
    );
    assert.deepEqual(evidence.devices.map((d: { os: string }) => d.os).sort(), ['ANDROID', 'WINDOWS']);
    assert.ok(evidence.risk.behavior.from && evidence.risk.volume.observations > 1, JSON.stringify(evidence.risk));
    // A feed source spanning an hour keeps both instants (seconds over HTTP, Timestamps over gRPC).
    const httpSource = evidence.behavior.find((b: { behavior: string }) => b.behavior === 'MALICIOUS_TRAFFIC').sources[0];
    const grpcSource = g.value.evidence.behavior.find((b: { behavior: string }) => b.behavior === 'MALICIOUS_TRAFFIC').sources[0];
    assert.equal(httpSource.last_seen - httpSource.first_seen, 3600);
    assert.deepEqual([grpcSource.first_seen.seconds, grpcSource.last_seen.seconds], [httpSource.first_seen, httpSource.last_seen]);

    // Same price: one credit each, explained or not, over either transport.
    const credits = (r: { headers?: Record<string, unknown>; trailers?: Record<string, string> }) =>
      Number(r.headers?.['x-credits-remaining'] ?? r.trailers?.['x-credits-remaining']);
    const plainHttp = await app.http.inject({ url: `/api/v4/lookup/ip/${ip}`, headers: { 'x-api-key': keys.key! } });
    const plainGrpc = await client.unary('LookupIP', { ip_address: ip }, keys.key);
    assert.deepEqual([credits(g), credits(plainHttp), credits(plainGrpc)], [credits(http) - 1, credits(http) - 2, credits(http) - 3]);
    // Without explain there is no evidence on either side, and the rest is unchanged.
    assert.equal(plainHttp.json().evidence, undefined);
    assert.equal(plainGrpc.value.evidence, null);
    assert.deepEqual(dropNulls(grpcToJson(plainGrpc.value)), dropNulls(plainHttp.json()));
    const { evidence: _, ...rest } = http.json();
    assert.deepEqual(plainHttp.json(), rest);
  });

  it('should draw lookups over both transports from one team balance', async (t) => {
    const { app, client, keys } = await setup(t);
    const http = await app.http.inject({ url: '/api/v4/lookup/ip/8.8.8.8', headers: { 'x-api-key': keys.key! } });
    const before = Number(http.headers['x-credits-remaining']);
    const g = await client.unary('LookupIPs', { ips: Array.from({ length: 100 }, (_, i) => `8.8.${i}.1`) }, keys.key);
    assert.equal(Number(g.trailers['x-credits-remaining']), before - 90, 'a batch of 100 costs 90');
    const me = await client.unary('GetAccountInfo', {}, keys.key);
    assert.equal(me.value.lookup_quota.credits, before - 90);
  });

  it('should answer the C-client bench sample alike over HTTP and gRPC, on the real dataset', async (t) => {
    // A prefix of the lists `npm run bench -- "C clients"` sends (same generator, same seed), and its
    // first batch: HTTP over a real socket (the lookup fast path, as the bench's wrk meets it) against
    // LookupIP and LookupIPs.
    const app = await buildTestApp(t, { dataset: loadDataset(await ensureRealDataset()) });
    const port = await app.grpc.listen('127.0.0.1', 0);
    const client = grpcClient(port);
    t.after(() => client.close());
    await app.http.listen({ port: 0, host: '127.0.0.1' });
    const origin = `http://127.0.0.1:${(app.http.server.address() as { port: number }).port}/api/v4`;
    const { key, orgId } = await app.team({ credits: 1_000_000 });
    await app.services.admin.setLimit(orgId, 'lookup', { rate: 1e6, burst: 1e6 });
    const sample = ['8.8.8.8', ...routedAddresses('v4', 300), ...routedAddresses('v6', 150), ...routedAddresses('mixed', 150)];
    let located = 0;
    for (const ip of sample) {
      const res = await fetch(`${origin}/lookup/ip/${ip}`, { headers: { 'x-api-key': key } });
      const http = (await res.json()) as { location?: { country?: string } };
      assert.equal(res.status, 200, `${ip}: ${JSON.stringify(http)}`);
      const g = await client.unary('LookupIP', { ip_address: ip }, key);
      assert.equal(g.error, undefined, `${ip}: ${g.error?.details}`);
      assert.deepEqual(dropNulls(grpcToJson(g.value)), dropNulls(http), ip);
      if (http.location?.country) located++;
    }
    // The comparison is only worth something over real records: most announced ranges have a country.
    assert.ok(located > sample.length / 2, `${located} of ${sample.length} located`);

    const [ips] = routedBatches(1);
    const res = await fetch(`${origin}/lookup/ips`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({ ips }),
    });
    const http = await res.json();
    assert.equal(res.status, 200, JSON.stringify(http).slice(0, 300));
    const g = await client.unary('LookupIPs', { ips }, key);
    assert.equal(g.error, undefined, g.error?.details);
    assert.deepEqual(dropNulls(grpcToJson(g.value)), dropNulls(http));
    assert.equal(ips!.length, 1000);
  });
});
