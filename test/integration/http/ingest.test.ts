import { describe, it } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import type { FEEDS } from '../../../src/modules/feeds/feed-catalog.ts';
import { hourOf } from '../../../src/lib/time.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';

const TOKEN = 'operator-token-for-tests-0123456789';
const PROBLEM = 'application/problem+json';

const post = (app: TestApp, feed: string, body: string, headers: Record<string, string> = {}) =>
  app.http.inject({
    method: 'POST',
    url: `/internal/v1/ingest/${feed}`,
    payload: body,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/x-ndjson', ...headers },
  });

async function logged(app: TestApp, feed: keyof typeof FEEDS): Promise<unknown[]> {
  const out: unknown[] = [];
  for await (const line of app.stores.feedLog.readHour(feed, hourOf(app.clock.now()))) out.push(JSON.parse(line));
  return out;
}

describe('POST /internal/v1/ingest/{feed}', () => {
  it('should store the good records, name every bad one by record and field, and keep going', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    const good = sampleRecords(app.clock.now()).proxies;
    const lines = [
      JSON.stringify(good),
      '{"ip": "1.2.3"',
      '',
      JSON.stringify({ ...good, ip: '::ffff:9.9.9.9' }),
      JSON.stringify({ ...good, asn: undefined }),
      JSON.stringify({ ...good, ip: '300.1.1.1' }),
    ];
    const res = await post(app, 'proxies', `${lines.join('\n')}\n`);
    assert.equal(res.statusCode, 200, res.body);
    const s = res.json();
    assert.equal(s.feed, 'proxies');
    assert.equal(s.accepted, 2);
    assert.equal(s.rejected, 3);
    assert.deepEqual(s.by_reason, { invalid_json: 1, missing_field: 1, invalid_ip: 1 });
    assert.deepEqual(Object.keys(s), ['feed', 'accepted', 'rejected', 'by_reason', 'errors'], 'snake_case, like the rest of the API');
    assert.deepEqual(
      s.errors.map((e: { record: number; field: string }) => [e.record, e.field]),
      [
        [2, 'record'],
        [5, 'asn'],
        [6, 'ip'],
      ],
    );
    const stored = (await logged(app, 'proxies')) as Array<{ ip: string }>;
    assert.deepEqual(
      stored.map((r) => r.ip),
      ['109.176.45.49', '9.9.9.9'],
      'stored canonically, in order',
    );
    const metrics = (await app.http.inject({ url: '/metrics' })).body;
    assert.match(metrics, /umbra_feed_records_total\{feed="proxies",outcome="accepted"\} 2/);
    assert.match(metrics, /umbra_feed_records_total\{feed="proxies",outcome="rejected"\} 3/);
  });

  it('should accept the feed by id or URL segment, and CSV for flat feeds only', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    const r = sampleRecords(app.clock.now());
    assert.equal((await post(app, 'helio/dns', JSON.stringify(r.honeypot_dns))).json().accepted, 1);
    const csv = `ip,provider,type,timestamp,country_code,asn\n1.1.1.1,BRIGHTDATA,RESIDENTIAL_PROXY,${r.proxies.timestamp},US,13335\n2.2.2.2,x,RESIDENTIAL_PROXY,${r.proxies.timestamp},US,3215\n`;
    const res = await post(app, 'proxies', csv, { 'content-type': 'text/csv' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().accepted, 1);
    assert.deepEqual(
      res.json().errors.map((e: { record: number; field: string }) => [e.record, e.field]),
      [[3, 'provider']],
    );
    const nested = await post(app, 'torrents', 'info_hash\nabc\n', { 'content-type': 'text/csv' });
    assert.equal(nested.statusCode, 415);
    assert.equal(nested.headers['content-type'], PROBLEM);
    assert.equal((await post(app, 'proxies', '{}', { 'content-type': 'application/json' })).statusCode, 415);
  });

  it('should name the line, the field and the reason of every bad CSV row, as for NDJSON', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    const ts = sampleRecords(app.clock.now()).proxies.timestamp;
    const row = (ip: string, rest = `BRIGHTDATA,RESIDENTIAL_PROXY,${ts},US,13335`) => `${ip},${rest}`;
    const csv = [
      'ip,provider,type,timestamp,country_code,asn',
      row('1.1.1.1'),
      row('1.1.1.2', `BRIGHTDATA,RESIDENTIAL_PROXY,${ts},US,abc`),
      row('1.1.1.3', `BRIGHTDATA,RESIDENTIAL_PROXY,${ts},US`),
      row('1.1.1.4', `BRIGHTDATA,RESIDENTIAL_PROXY,${ts},US,1,extra`),
      '',
      row('1.1.1.5', `"BRIGHT\nDATA",RESIDENTIAL_PROXY,${ts},US,1`),
      row('300.1.1.1'),
      row('1.1.1.7', `"BRIGHTDATA,RESIDENTIAL_PROXY,${ts},US,1`),
      row('1.1.1.8'),
    ].join('\n');
    const res = await post(app, 'proxies', `${csv}\n`, { 'content-type': 'text/csv' });
    assert.equal(res.statusCode, 200, res.body);
    const s = res.json();
    assert.equal(s.accepted, 1);
    assert.deepEqual(
      s.errors.map((e: { record: number; field: string; reason: string; message: string }) => [e.record, e.field, e.reason, e.message]),
      [
        [3, 'asn', 'wrong_type', 'must be an integer, not "abc"'],
        [4, 'asn', 'missing_field', 'is required'],
        [5, 'column 7', 'unknown_field', 'has 7 fields; the header names 6 columns (ip, provider, type, timestamp, country_code, asn)'],
        // Line 6 is blank; the row of line 7 goes on to line 8 inside its quotes, so the next row is line 9.
        [7, 'provider', 'invalid_value', 'must be upper-case provider tag, e.g. BRIGHTDATA'],
        [9, 'ip', 'invalid_ip', 'must be a single IPv4 or IPv6 address'],
        [10, 'record', 'invalid_csv', 'opens a quoted field that is never closed; nothing after it was read'],
      ],
    );
    assert.deepEqual(s.by_reason, { wrong_type: 1, missing_field: 1, unknown_field: 1, invalid_value: 1, invalid_ip: 1, invalid_csv: 1 });
    const stray = [csv.split('\n')[0], row('1.1.1.1'), row('1.1.1.9', `"BRIGHT"DATA,RESIDENTIAL_PROXY,${ts},US,1`), row('1.1.1.10')];
    const cut = (await post(app, 'proxies', `${stray.join('\n')}\n`, { 'content-type': 'text/csv' })).json();
    assert.equal(cut.accepted, 1, 'the rows before a syntax error are stored');
    assert.deepEqual(cut.errors, [
      {
        record: 3,
        field: 'record',
        reason: 'invalid_csv',
        message: 'has a quoted field followed by more text (a quote inside a quoted field is written twice: ""); nothing after it was read',
      },
    ]);
    // The same bad value sent as NDJSON is named with the same field and words.
    const good = sampleRecords(app.clock.now()).proxies;
    const ndjson = (await post(app, 'proxies', JSON.stringify({ ...good, asn: 'abc' }))).json();
    assert.deepEqual(ndjson.errors, { 'record 1: asn': ['must be an integer, not "abc"'] });
  });

  it('should answer 400 naming the records when none is good, and for an unknown feed', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    const bad = await post(app, 'ja4t', '{"ip":"1.1.1.1"}\nnope\n');
    assert.equal(bad.statusCode, 400);
    assert.equal(bad.headers['content-type'], PROBLEM);
    assert.equal(bad.json().title, 'Validation error');
    assert.deepEqual(Object.keys(bad.json().errors), ['record 1: ja4t', 'record 2: record']);
    const unknown = await post(app, '..%2Fetc', '{}');
    assert.equal(unknown.statusCode, 400);
    assert.ok(unknown.json().errors.feed);
  });

  it('should need the operator token, never a customer key, and be off without one configured', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    const { key } = await app.team();
    const body = JSON.stringify(sampleRecords(app.clock.now()).proxies);
    for (const headers of [
      { authorization: '' } as Record<string, string>,
      { authorization: '' },
      { authorization: `Bearer ${TOKEN}x` },
      { authorization: `Bearer ${key}` },
      { authorization: '', 'x-api-key': key },
    ]) {
      const res = await post(app, 'proxies', body, headers);
      assert.equal(res.statusCode, 401, JSON.stringify(headers));
      assert.equal(res.headers['content-type'], PROBLEM);
    }
    assert.deepEqual(await logged(app, 'proxies'), []);
    const off = await buildTestApp(t);
    assert.equal((await post(off, 'proxies', body)).statusCode, 503);
  });

  it('should feed the domain lookup from honeypot events as they arrive', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    const { key } = await app.team();
    const r = sampleRecords(app.clock.now());
    const body = [r.honeypot_http, { ...r.honeypot_http, port: 8080 }, r.honeypot_dns].map((x) => JSON.stringify(x)).join('\n');
    assert.equal((await post(app, 'honeypot_http', body)).json().rejected, 1, 'a dns record is not an http record');
    assert.equal((await post(app, 'honeypot_dns', JSON.stringify(r.honeypot_dns))).json().accepted, 1);
    const res = await app.http.inject({ url: '/api/v4/lookup/domain/acme-logistics.com', headers: { 'x-api-key': key } });
    const d = res.json().data;
    assert.equal(d.status, 'ok');
    assert.deepEqual(d.stats, { events_24h: 3, total_events_30d: 3 });
    assert.deepEqual(d.top_subdomains, [
      { subdomain: 'mail.acme-logistics.com', count: 2 },
      { subdomain: 'x7f3k2.acme-logistics.com', count: 1 },
    ]);
    assert.deepEqual(
      d.top_ports,
      [
        { port: 53, count: 1 },
        { port: 80, count: 1 },
        { port: 8080, count: 1 },
      ].sort((a, b) => b.count - a.count || a.port - b.port),
    );
    assert.equal(d.recent_events[0].source_ip_masked.endsWith('.x'), true);
  });

  it("should mark the demo simulator's events as simulated in recent_events, and only those", async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN });
    const { key } = await app.team();
    const r = sampleRecords(app.clock.now());
    const real = r.honeypot_http as Record<string, unknown> & { timestamp: number };
    assert.equal((await post(app, 'honeypot_http', JSON.stringify(real))).json().accepted, 1);
    // What the simulator does: its records go through the same ingestion, flagged as made up.
    const { FEEDS: feeds } = await import('../../../src/modules/feeds/feed-catalog.ts');
    const made = { ...real, timestamp: real.timestamp + 1_000, port: 8443 };
    const summary = await app.services.ingest.ingest(feeds.honeypot_http, [[{ n: 1, value: made }]], { simulated: true });
    assert.equal(summary.accepted, 1);
    const res = await app.http.inject({ url: '/api/v4/lookup/domain/acme-logistics.com', headers: { 'x-api-key': key } });
    assert.equal(res.statusCode, 200);
    const events = res.json().data.recent_events;
    assert.equal(events.length, 2);
    assert.equal(events[0].port, 8443, 'newest first');
    assert.equal(events[0].simulated, true);
    assert.equal(events[1].port, real.port);
    assert.equal('simulated' in events[1], false, 'a real event has no simulated member at all');
  });

  it('should rebuild domain intelligence from the durable log after a restart', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'umbra-restart-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = { UMBRA_OPERATOR_TOKEN: TOKEN, UMBRA_DATA_DIR: dataDir };
    const first = await buildTestApp(t, {}, env);
    const r = sampleRecords(first.clock.now());
    const body = [0, 1, 2]
      .map((k) => JSON.stringify({ ...r.honeypot_http, timestamp: (r.honeypot_http.timestamp as number) - k * 86_400_000 }))
      .join('\n');
    assert.equal((await post(first, 'honeypot_http', body)).json().accepted, 3);
    await first.close();

    const second = await buildTestApp(t, {}, env);
    const { key } = await second.team();
    const d = (await second.http.inject({ url: '/api/v4/lookup/domain/acme-logistics.com', headers: { 'x-api-key': key } })).json().data;
    assert.deepEqual(d.stats, { events_24h: 1, total_events_30d: 3 });
    assert.deepEqual(
      d.time_series.slice(-3).map((x: { events: number }) => x.events),
      [1, 1, 1],
    );
  });
});
