import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sampleRecords } from '../../../test/helpers/feed-fixtures.ts';
import { FEED_LIST, FEEDS, findFeed, type FeedId } from './feed-catalog.ts';
import { RecordValidator, type RecordCheck } from './feed-records.ts';

const NOW = Date.UTC(2026, 10, 22, 12, 0, 0);
const validator = new RecordValidator(() => NOW);
const check = (feed: FeedId, patch: Record<string, unknown> | ((r: Record<string, unknown>) => void)): RecordCheck => {
  const r = structuredClone(sampleRecords(NOW)[feed]);
  if (typeof patch === 'function') patch(r);
  else Object.assign(r, patch);
  return validator.check(FEEDS[feed], r);
};
const refused = (c: RecordCheck, reason: string, field: string) => {
  assert.equal(c.ok, false, 'should be refused');
  if (!c.ok) {
    assert.equal(c.reason, reason, c.message);
    assert.equal(c.field, field, c.message);
  }
};

describe(RecordValidator.name, () => {
  it('should accept the sample record of every feed and serialise it canonically', () => {
    for (const feed of FEED_LIST) {
      const c = validator.check(feed, structuredClone(sampleRecords(NOW)[feed.id]));
      assert.ok(c.ok, `${feed.id}: ${!c.ok && `${c.field} ${c.message}`}`);
      assert.equal(c.timeMs, NOW - (feed.unit === 's' ? 0 : 0), feed.id);
      assert.deepEqual(JSON.parse(c.line), c.record);
    }
  });

  it('should refuse, in every feed, a record missing its timestamp, with an unknown member, or of the wrong type', () => {
    for (const feed of FEED_LIST) {
      refused(
        check(feed.id, (r) => delete r.timestamp),
        'missing_field',
        'timestamp',
      );
      refused(check(feed.id, { extra_member: 1 }), 'unknown_field', 'extra_member');
      refused(check(feed.id, { timestamp: '1795348800' }), 'wrong_type', 'timestamp');
      refused(validator.check(feed, [sampleRecords(NOW)[feed.id]]), 'not_an_object', 'record');
    }
  });

  it('should name the missing, unknown and mistyped field', () => {
    refused(
      check('proxies', (r) => delete r.asn),
      'missing_field',
      'asn',
    );
    refused(check('proxies', { colour: 'red' }), 'unknown_field', 'colour');
    refused(check('proxies', { asn: '16276' }), 'wrong_type', 'asn');
    refused(check('proxies', { asn: 1.5 }), 'wrong_type', 'asn');
    refused(
      check('honeypot_http', (r) => delete (r.meta as Record<string, unknown>).proxy_ip),
      'missing_field',
      'meta.proxy_ip',
    );
    refused(
      check('honeypot_http', (r) => ((r.details as Record<string, unknown>).headers = { a: 1 })),
      'wrong_type',
      'details.headers.a',
    );
    refused(
      check('torrents', (r) => ((r.peers as Array<Record<string, unknown>>)[0]!.port = 70000)),
      'invalid_value',
      'peers.0.port',
    );
    refused(check('honeypot_dns', { port: 80 }), 'invalid_value', 'port');
    refused(check('ja4t', { ja4t: 'not-a-ja4t' }), 'invalid_value', 'ja4t');
    refused(check('proxies', { provider: 'brightdata' }), 'invalid_value', 'provider');
    assert.equal(validator.checkLine(FEEDS.proxies, '{"ip":').ok, false);
    refused(validator.checkLine(FEEDS.proxies, '{"ip":'), 'invalid_json', 'record');
    refused(validator.checkLine(FEEDS.proxies, '[1,2]'), 'not_an_object', 'record');
  });

  it('should catch a timestamp in the wrong unit or in the future', () => {
    const ms = check('proxies', { timestamp: NOW });
    refused(ms, 'invalid_value', 'timestamp');
    assert.match(!ms.ok ? ms.message : '', /Unix seconds/);
    const s = check('honeypot_adb', { timestamp: Math.floor(NOW / 1000) });
    refused(s, 'invalid_value', 'timestamp');
    assert.match(!s.ok ? s.message : '', /Unix milliseconds/);
    refused(check('proxies', { timestamp: Math.floor(NOW / 1000) + 3600 }), 'future_timestamp', 'timestamp');
    assert.ok(check('proxies', { timestamp: Math.floor(NOW / 1000) + 300 }).ok, 'five minutes of clock skew is fine');
  });

  it('should canonicalise addresses and domains and check ranges and hashes', () => {
    const p = check('proxies', { ip: '::ffff:1.2.3.4' });
    assert.ok(p.ok && p.record.ip === '1.2.3.4');
    const v6 = check('honeypot_https', { source_ip: '2001:DB8:0:0:0:0:0:1' });
    assert.ok(v6.ok && v6.record.source_ip === '2001:db8::1');
    refused(check('proxies', { ip: '1.2.3' }), 'invalid_ip', 'ip');
    refused(check('anonymizers', { range_end: '185.220.100.255' }), 'invalid_value', 'range_end');
    refused(check('anonymizers', { range_end: '2001:db8::1' }), 'invalid_value', 'range_end');
    const d = check('honeypot_http', { domain: 'MAIL.Bücher.example' });
    assert.ok(d.ok && d.record.domain === 'mail.xn--bcher-kva.example');
    refused(check('honeypot_http', { domain: '../etc/passwd' }), 'invalid_domain', 'domain');
    refused(check('honeypot_adb', { hash: 'f'.repeat(64) }), 'hash_mismatch', 'hash');
    refused(
      check('torrents', (r) => ((r.peers as Array<Record<string, unknown>>)[0]!.ip = 'nope')),
      'invalid_ip',
      'peers.0.ip',
    );
    const t = check('torrents', { info_hash: 'A'.repeat(40) });
    assert.ok(t.ok && t.record.info_hash === 'a'.repeat(40));
  });

  it('should store a flat record as sent only when that text is already its canonical value', () => {
    const good = sampleRecords(NOW).proxies;
    const compact = JSON.stringify(good);
    const kept = validator.checkLine(FEEDS.proxies, compact);
    assert.ok(kept.ok && kept.line === compact);
    const cases: Array<[string, string]> = [
      [compact.replace('"asn":16276', '"asn":16276.0'), 'a fraction'],
      [compact.replace('"asn":16276', '"asn":1.6276e4'), 'an exponent'],
      [compact.replace('"ip":"109.176.45.49"', '"ip":"::ffff:109.176.45.49"'), 'a canonicalised address'],
      [compact.replace('{"ip"', '{"asn":1,"ip"'), 'a repeated member'],
      [` ${compact}`, 'white space at the start'],
    ];
    for (const [text, what] of cases) {
      const c = validator.checkLine(FEEDS.proxies, text);
      assert.ok(c.ok, what);
      assert.equal(c.line, JSON.stringify(c.record), what);
      assert.notEqual(c.line, text, what);
    }
    const fraction = validator.checkLine(FEEDS.proxies, cases[0]![0]);
    assert.ok(fraction.ok && fraction.line.endsWith('"asn":16276}'), 'integers are stored as integers');
    // Nested records are always re-serialised.
    const http = JSON.stringify(sampleRecords(NOW).honeypot_http);
    const h = validator.checkLine(FEEDS.honeypot_http, http.replace('{', '{ '));
    assert.ok(h.ok && h.line === JSON.stringify(h.record));
  });

  it('should find feeds by id or URL segment', () => {
    assert.equal(findFeed('helio/http')?.id, 'honeypot_http');
    assert.equal(findFeed('HONEYPOT_DNS')?.id, 'honeypot_dns');
    assert.equal(findFeed('../proxies'), undefined);
  });

  it('should store one tag per provider: a product-line tag becomes the provider with its variant', () => {
    const ja4t = check('ja4t', { provider: 'SMARTPROXY_MOBILE', type: 'MOBILE_PROXY' });
    assert.ok(ja4t.ok);
    assert.deepEqual([ja4t.record.provider, ja4t.record.variant], ['SMARTPROXY', 'MOBILE']);
    assert.deepEqual(JSON.parse(ja4t.line), ja4t.record, 'the stored line carries the canonical tag');
    const alias = check('proxies', { provider: 'BRIGHT_DATA' });
    assert.ok(alias.ok);
    assert.deepEqual([alias.record.provider, alias.record.variant], ['BRIGHTDATA', undefined]);
    const stated = check('anonymizers', { provider: 'INFATICA_RESIDENTIAL', variant: 'ISP' });
    assert.ok(stated.ok);
    assert.deepEqual([stated.record.provider, stated.record.variant], ['INFATICA', 'ISP'], "the record's own variant wins");
    const unknown = check('proxies', { provider: 'ACME_MOBILE' });
    assert.ok(unknown.ok);
    assert.deepEqual([unknown.record.provider, unknown.record.variant], ['ACME_MOBILE', undefined]);
    refused(check('proxies', { variant: 'HOME' }), 'invalid_value', 'variant');
  });
});
