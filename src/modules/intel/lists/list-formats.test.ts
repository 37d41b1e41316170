import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ListFormatError, parseList, type ParseOptions } from './list-formats.ts';

const FIXTURES = join(import.meta.dirname, '../../../../test/fixtures/lists');
const fixture = (name: string, options?: ParseOptions) => parseList(readFileSync(join(FIXTURES, name)), options);
const texts = (r: ReturnType<typeof parseList>) => r.cidrs.map((c) => c.text);

describe('parseList: publisher formats from small real-format fixtures', () => {
  it('should read Google prefix files (googlebot.json), deduplicated and sorted', () => {
    const r = fixture('googlebot.json');
    assert.equal(r.format, 'google-prefixes');
    assert.equal(r.entries, 6);
    assert.deepEqual(texts(r), [
      '66.249.79.64/27',
      '192.178.4.0/27',
      '192.178.4.128/27',
      '2001:4860:4801:10::/64',
      '2001:4860:4801:11::/64',
    ]);
    assert.deepEqual(r.rejected, []);
  });

  it('should read the Tor bulk exit list as single addresses', () => {
    const r = fixture('tor-bulk-exit-list.txt', { kind: 'TOR_NODE' });
    assert.equal(r.format, 'tor-bulk-exit-list');
    assert.deepEqual(texts(r), [
      '23.184.48.209/32',
      '93.95.230.253/32',
      '185.194.142.90/32',
      '185.220.101.18/32',
      '185.220.101.76/32',
      '185.244.195.103/32',
    ]);
    // Without the kind, a list of bare addresses says only what it is.
    assert.equal(fixture('tor-bulk-exit-list.txt').format, 'address-lines');
    assert.equal(parseList('# Tor exit nodes that can reach 1.2.3.4:443\n185.220.101.18\n').format, 'tor-bulk-exit-list');
  });

  it("should read Tor's exit-addresses blocks, one range per distinct ExitAddress", () => {
    const r = fixture('tor-exit-addresses.txt');
    assert.equal(r.format, 'tor-exit-addresses');
    assert.deepEqual(texts(r), ['93.95.230.253/32', '185.220.101.18/32', '185.220.101.76/32']);
    assert.equal(r.entries, 4);
    const bad = parseList(
      'ExitNode AB\nExitAddress 999.1.1.1 2022-01-18 11:04:37\nExitAddres 1.2.3.4\nExitAddress 1.2.3.4 2022-01-18 11:04:37\n',
    );
    assert.deepEqual(texts(bad), ['1.2.3.4/32']);
    assert.deepEqual(
      bad.rejected.map((p) => p.line),
      [2, 3],
    );
    assert.match(bad.rejected[0]!.reason, /not an IP address/);
    assert.match(bad.rejected[1]!.reason, /not an exit-addresses line/);
  });

  it('should read AWS ip-ranges.json (IPv4 and IPv6 prefixes of every service), or only the chosen services', () => {
    const r = fixture('aws-ip-ranges.json');
    assert.equal(r.format, 'aws-ip-ranges');
    assert.equal(r.entries, 7);
    assert.deepEqual(texts(r), [
      '3.4.12.4/32',
      '3.5.140.0/22',
      '15.177.0.0/18',
      '23.254.120.0/21',
      '120.52.22.96/27',
      '2406:daba:f000::/40',
    ]);
    assert.deepEqual(r.sections, {
      available: ['AMAZON', 'CLOUDFRONT', 'EC2', 'ROUTE53_HEALTHCHECKS'],
      imported: ['AMAZON', 'CLOUDFRONT', 'EC2', 'ROUTE53_HEALTHCHECKS'],
    });
    const health = fixture('aws-ip-ranges.json', { sections: ['route53_healthchecks'] });
    assert.deepEqual(texts(health), ['15.177.0.0/18']);
    assert.throws(
      () => fixture('aws-ip-ranges.json', { sections: ['LAMBDA'] }),
      (e: Error) => e instanceof ListFormatError && /no section 'LAMBDA'.*AMAZON, CLOUDFRONT/.test(e.message),
    );
  });

  it("should read Google Cloud's cloud.json", () => {
    const r = fixture('gcp-cloud.json');
    assert.equal(r.format, 'gcp-cloud-json');
    assert.deepEqual(texts(r), ['8.34.210.0/24', '8.34.212.0/22', '34.1.208.0/20', '34.35.0.0/16', '2600:1900:8000::/44']);
  });

  it("should read Cloudflare's API answer and a plain JSON array of CIDRs", () => {
    const api = fixture('cloudflare-api.json');
    assert.equal(api.format, 'cloudflare-api');
    assert.deepEqual(texts(api), [
      '103.21.244.0/22',
      '104.16.0.0/13',
      '172.64.0.0/13',
      '173.245.48.0/20',
      '2400:cb00::/32',
      '2606:4700::/32',
    ]);
    const arr = fixture('cloudflare-ips.json');
    assert.equal(arr.format, 'json-cidr-array');
    assert.equal(arr.cidrs.length, 5);
  });

  it('should read Datadog ip-ranges: synthetics for monitors, webhooks for senders, or named sections', () => {
    const monitors = fixture('datadog-ip-ranges.json', { kind: 'UPTIME_MONITOR' });
    assert.equal(monitors.format, 'datadog-ip-ranges');
    assert.deepEqual(texts(monitors), ['3.1.36.99/32', '3.1.219.207/32', '3.18.172.189/32', '13.244.85.86/32']);
    assert.deepEqual(monitors.sections, { available: ['api', 'synthetics', 'webhooks'], imported: ['synthetics'] });
    assert.deepEqual(texts(fixture('datadog-ip-ranges.json', { kind: 'WEBHOOK_PROVIDER' })), [
      '3.90.129.171/32',
      '44.192.28.0/25',
      '100.28.212.0/22',
    ]);
    assert.equal(fixture('datadog-ip-ranges.json', { kind: 'DATACENTER' }).cidrs.length, 9, 'every section');
    assert.deepEqual(texts(fixture('datadog-ip-ranges.json', { kind: 'UPTIME_MONITOR', sections: ['API'] })), [
      '3.233.144.0/20',
      '2600:1f18:24e6:b900::/56',
    ]);
  });

  it("should read Stripe's IP files, the webhook senders by default", () => {
    const r = fixture('stripe-ips-webhooks.json');
    assert.equal(r.format, 'stripe-ips');
    assert.deepEqual(texts(r), [
      '3.18.12.63/32',
      '3.69.109.8/32',
      '3.120.168.93/32',
      '3.130.192.231/32',
      '13.235.14.237/32',
      '54.187.216.72/32',
    ]);
    const both = parseList('{"webhooks":["3.18.12.63"],"api":["13.112.224.240"]}');
    assert.deepEqual(texts(both), ['3.18.12.63/32']);
    assert.deepEqual(both.sections, { available: ['api', 'webhooks'], imported: ['webhooks'] });
    assert.equal(parseList('{"webhooks":["3.18.12.63"],"api":["13.112.224.240"]}', { sections: ['all'] }).cidrs.length, 2);
  });

  it("should read GitHub's meta: the webhook senders by default, range sections only", () => {
    const r = fixture('github-meta.json');
    assert.equal(r.format, 'github-meta');
    assert.deepEqual(texts(r), [
      '140.82.112.0/20',
      '143.55.64.0/20',
      '185.199.108.0/22',
      '192.30.252.0/22',
      '2606:50c0::/32',
      '2a0a:a440::/29',
    ]);
    assert.deepEqual(r.sections, { available: ['hooks', 'web'], imported: ['hooks'] }, 'ssh_keys and domains are no range sections');
  });

  it('should read Azure ServiceTags, every tag or the chosen ones', () => {
    const r = fixture('azure-service-tags.json');
    assert.equal(r.format, 'azure-service-tags');
    assert.deepEqual(texts(r), ['40.72.79.38/31', '40.73.102.187/32', '52.130.15.130/31', '52.130.112.16/29', '2404:7940:1:402::178/125']);
    assert.deepEqual(texts(fixture('azure-service-tags.json', { sections: ['applicationinsightsavailability'] })), [
      '40.72.79.38/31',
      '52.130.15.130/31',
    ]);
  });

  it("should read plain CIDR lines and Apple's geofeed CSV", () => {
    const bing = fixture('bingbot-cidrs.txt');
    assert.equal(bing.format, 'cidr-lines');
    assert.deepEqual(texts(bing), ['13.66.139.0/24', '13.66.144.0/24', '13.67.10.16/28', '207.46.13.0/24']);
    const relay = fixture('egress-ip-ranges.csv');
    assert.equal(relay.format, 'geofeed-csv');
    assert.deepEqual(texts(relay), ['104.28.28.0/32', '104.28.28.1/32', '140.248.1.248/31', '172.224.226.0/27']);
  });
});

describe("parseList: the publisher's time", () => {
  const at = (file: string, options?: ParseOptions) => parseList(readFileSync(join(FIXTURES, file)), options).published_at;
  const utc = (...a: [number, number, number, number, number, number]) => Date.UTC(...a) / 1000;
  it('should read the time each format carries, and none from formats without one', () => {
    assert.equal(at('googlebot.json'), utc(2026, 7, 20, 14, 46, 45), 'creationTime, UTC');
    assert.equal(at('gcp-cloud.json'), utc(2026, 7, 21, 1, 5, 42), 'creationTime');
    assert.equal(at('aws-ip-ranges.json'), 1_787_297_825, 'syncToken, Unix seconds');
    assert.equal(at('datadog-ip-ranges.json', { kind: 'UPTIME_MONITOR' }), utc(2026, 1, 24, 0, 0, 0), 'modified');
    assert.equal(at('tor-exit-addresses.txt'), utc(2022, 0, 18, 12, 2, 1), 'the latest Tor date: the Downloaded header');
    for (const f of [
      'tor-bulk-exit-list.txt',
      'bingbot-cidrs.txt',
      'cloudflare-api.json',
      'azure-service-tags.json',
      'egress-ip-ranges.csv',
    ])
      assert.equal(at(f), undefined, f);
  });
  it("should read AWS's createDate, Google Cloud's millisecond syncToken and Tor dates without a Downloaded header", () => {
    assert.equal(
      parseList('{"createDate":"2026-08-21-07-37-05","prefixes":[{"ip_prefix":"3.4.12.4/32","service":"AMAZON"}]}').published_at,
      utc(2026, 7, 21, 7, 37, 5),
    );
    assert.equal(
      parseList('{"syncToken":"1787299542583","prefixes":[{"ipv4Prefix":"34.1.208.0/20","service":"Google Cloud"}]}').published_at,
      1_787_299_542,
    );
    const tor = 'ExitNode AB\nPublished 2024-03-01 10:00:00\nLastStatus 2024-03-02 11:00:00\nExitAddress 192.0.2.1 2024-03-02 10:30:00\n';
    assert.equal(parseList(tor).published_at, utc(2024, 2, 2, 11, 0, 0));
    assert.equal(parseList('{"creationTime":"yesterday","prefixes":[]}').published_at, undefined, 'an unreadable time is no time');
    assert.equal(parseList('{"syncToken":"12","prefixes":[]}').published_at, undefined, 'nor one before 2000');
  });
});

describe('parseList: bad entries', () => {
  it('should skip comments and blank lines, accept CRLF, IPv4 and IPv6, and name each bad line', () => {
    const text =
      '# header\r\n\r\n192.0.2.0/24\r\n2001:db8::/32  # docs\r\nnot-an-ip\r\n198.51.100.7/24\r\n10.0.0.0/33\r\n\t203.0.113.9 \r\n';
    const r = parseList(text);
    assert.equal(r.format, 'cidr-lines');
    assert.deepEqual(texts(r), ['192.0.2.0/24', '198.51.100.0/24', '203.0.113.9/32', '2001:db8::/32']);
    assert.deepEqual(
      r.rejected.map((p) => [p.line, p.entry]),
      [
        [5, 'not-an-ip'],
        [7, '10.0.0.0/33'],
      ],
    );
    assert.match(r.rejected[1]!.reason, /out of range/);
    assert.deepEqual(r.normalised, [{ line: 6, entry: '198.51.100.7/24', reason: 'host bits set: read as 198.51.100.0/24' }]);
    assert.equal(r.entries, 6);
    const mixed = parseList('192.0.2.0/24 ; SBL123\n1.2.3.4, 5.6.7.8\n');
    assert.equal(mixed.format, 'cidr-lines');
    assert.deepEqual(texts(mixed), ['192.0.2.0/24']);
    assert.deepEqual(
      mixed.rejected.map((p) => [p.line, p.entry]),
      [[2, '1.2.3.4, 5.6.7.8']],
      'a comma outside a geofeed is no separator',
    );
  });

  it('should place bad JSON values on their lines', () => {
    const text =
      '{\n  "creationTime": "x",\n  "prefixes": [\n    {"ipv4Prefix": "66.249.64.0/27"},\n    {"ipv4Prefix": "66.249.64.999/27"},\n    ' +
      '{"ipv6Prefix": 7}\n  ]\n}\n';
    const r = parseList(text);
    assert.deepEqual(texts(r), ['66.249.64.0/27']);
    assert.deepEqual(
      r.rejected.map((p) => [p.line, p.entry]),
      [
        [5, '66.249.64.999/27'],
        [0, '7'],
      ],
    );
    assert.equal(r.rejected[1]!.reason, 'not a string');
    // Escaped slashes (as some JSON writers emit) are read; a repeated bad value gets each of its lines.
    const escaped = parseList('[\n"1.2.3.0\\/24",\n"bad",\n"bad",\n"10.0.0.1/8"\n]');
    assert.deepEqual(texts(escaped), ['1.2.3.0/24', '10.0.0.0/8']);
    assert.deepEqual(
      escaped.rejected.map((p) => p.line),
      [3, 4],
    );
    assert.deepEqual(
      escaped.normalised.map((p) => p.line),
      [5],
    );
  });

  it('should refuse invalid or unknown JSON, and read an empty file as no ranges', () => {
    assert.throws(() => parseList('{"prefixes": ['), ListFormatError);
    assert.throws(() => parseList('{"foo": {"bar": 1}}'), /unrecognised JSON layout \(top-level members: foo\)/);
    assert.deepEqual(
      parseList('42').rejected.map((x) => x.line),
      [1],
      'not JSON-looking: a bad line',
    );
    const empty = parseList('');
    assert.equal(empty.cidrs.length, 0);
    assert.equal(empty.entries, 0);
    assert.equal(parseList('\ufeff8.8.8.8\n').cidrs[0]!.text, '8.8.8.8/32', 'a UTF-8 BOM is skipped');
  });
});

// Whole files as their publishers ship them, kept outside the repository (their terms are the publishers'): set
// UMBRA_REAL_LISTS_DIR to a folder holding them to run these. Counts checked independently with Python's ipaddress.
const REAL_DIR = process.env.UMBRA_REAL_LISTS_DIR;
const REAL: Array<[file: string, format: string, count: number, options?: ParseOptions]> = [
  ['googlebot.json', 'google-prefixes', 315],
  ['googlesc.json', 'google-prefixes', 270],
  ['user-triggered-fetchers.json', 'google-prefixes', 724],
  ['gcp.json', 'gcp-cloud-json', 1092],
  ['aws.json', 'aws-ip-ranges', 11005],
  ['cloudflare.json', 'json-cidr-array', 22],
  ['datadog.json', 'datadog-ip-ranges', 113, { kind: 'UPTIME_MONITOR' }],
  ['stripe.json', 'stripe-ips', 15],
  ['bing-ipv4.txt', 'cidr-lines', 28],
  ['duckduckbot-ipv4.txt', 'cidr-lines', 481],
  ['openai-ipv4.txt', 'cidr-lines', 254],
  ['perplexity-ipv4.txt', 'cidr-lines', 12],
  ['facebook-ipv4.txt', 'cidr-lines', 550],
  ['facebook-ipv6.txt', 'cidr-lines', 744],
  ['twitter-ipv4.txt', 'cidr-lines', 141],
  ['telegram-ipv4.txt', 'cidr-lines', 9],
  ['pingdom-ipv4.txt', 'address-lines', 99],
  ['statuscake-ipv4.txt', 'address-lines', 183],
  ['protonvpn-ipv4.txt', 'address-lines', 860],
  ['apple-proxy-ipv4.txt', 'cidr-lines', 41949],
  ['tor-bulk-exit-list-2022.txt', 'tor-bulk-exit-list', 1396, { kind: 'TOR_NODE' }],
];

describe('parseList: whole publisher files (UMBRA_REAL_LISTS_DIR)', () => {
  const skip = REAL_DIR === undefined ? 'UMBRA_REAL_LISTS_DIR is not set (a folder of whole publisher files)' : false;
  if (REAL_DIR !== undefined)
    it('should find the folder UMBRA_REAL_LISTS_DIR names', () => assert.ok(existsSync(REAL_DIR), `${REAL_DIR} is missing`));
  const dir = REAL_DIR ?? '';
  for (const [file, format, count, options] of REAL) {
    it(`should parse ${file} as ${format} with ${count} ranges and no rejected entry`, { skip }, () => {
      const r = parseList(readFileSync(join(dir, file)), options);
      assert.equal(r.format, format);
      assert.equal(r.cidrs.length, count);
      assert.deepEqual(r.rejected, []);
    });
  }
  it('should find a Googlebot address and a Tor exit from the published files', { skip }, () => {
    const gb = texts(parseList(readFileSync(join(dir, 'googlebot.json'))));
    assert.ok(gb.includes('66.249.79.64/27'));
    const tor = texts(parseList(readFileSync(join(dir, 'tor-bulk-exit-list-2022.txt'))));
    assert.ok(tor.includes('185.220.101.18/32'));
  });
});
