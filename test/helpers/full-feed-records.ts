import { createHash } from 'node:crypto';
import type { FeedId } from '../../src/modules/feeds/feed-catalog.ts';

const adb = (bytes: number[]) => {
  const raw = Buffer.from(bytes);
  return { command: raw.toString('base64'), hash: createHash('sha256').update(raw).digest('hex') };
};

/**
 * Test helper: canonical records of every feed stamped within the hour starting at `hourMs`, that
 * between them use every member of the feed's record: nested objects, lists with several entries and
 * empty ones, an empty header map, both kinds of pool_id (integer and string), optional members
 * present and absent, a null https `details`, ASNs above 2^31, text with quotes, CR LF and non-ASCII.
 */
export function fullRecords(hourMs: number): Record<FeedId, Record<string, unknown>[]> {
  const s = Math.floor(hourMs / 1000);
  const ms = (k: number) => hourMs + 1_234 + k;
  const meta = (pool_id: number | string) => ({ proxy_ip: '192.0.2.10', server: 'helio-eu-1', pool_id, provider: 'HETZNER' });
  return {
    proxies: [
      { ip: '109.176.45.49', provider: 'BRIGHTDATA', type: 'RESIDENTIAL_PROXY', timestamp: s + 1, country_code: 'US', asn: 16276 },
      { ip: '2001:db8::7', provider: 'OXYLABS', type: 'DATACENTER_PROXY', timestamp: s + 2, country_code: '', asn: 4_294_967_294 },
    ],
    anonymizers: [
      {
        range_start: '185.220.101.0',
        range_end: '185.220.101.63',
        provider: 'NORDVPN',
        type: 'COMMERCIAL_VPN',
        timestamp: s + 3,
        country_code: 'DE',
        asn: 4_200_000_001,
      },
      {
        range_start: '2001:db8::',
        range_end: '2001:db8::ff',
        provider: 'TOR',
        type: 'TOR_EXIT',
        timestamp: s + 4,
        country_code: '',
        asn: 0,
      },
    ],
    torrents: [
      {
        info_hash: 'a'.repeat(40),
        name: 'ubuntu "noble" – 24.04',
        magnet_uri: `magnet:?xt=urn:btih:${'a'.repeat(40)}&dn=ubuntu`,
        total_size: 6_114_656_256,
        piece_length: 262_144,
        file_count: 2,
        files: [
          { path: 'ubuntu/ubuntu-24.04.1-desktop-amd64.iso', length: 6_114_656_000 },
          { path: 'ubuntu/README ü.txt', length: 256 },
        ],
        peers: [
          { ip: '73.12.34.56', port: 51413, source: 'DHT', encrypted: true },
          { ip: '2001:db8::42', port: 6881, source: 'udp://tracker.example:1337/announce', encrypted: false },
          { ip: '198.51.100.3', port: 0, source: 'PEX', encrypted: false },
        ],
        timestamp: s + 5,
      },
      {
        info_hash: 'b'.repeat(40),
        name: '',
        magnet_uri: 'magnet:?xt=urn:btih:bbbb',
        total_size: 0,
        piece_length: 16_384,
        file_count: 0,
        files: [],
        peers: [],
        timestamp: s + 6,
      },
    ],
    honeypot_http: [
      {
        timestamp: ms(1),
        tunnel_id: 12,
        domain: 'mail.acme-logistics.com',
        port: 80,
        protocol: 'http',
        meta: meta(7),
        details: {
          method: 'GET',
          uri: '/.env?x="1"',
          version: 'HTTP/1.1',
          headers: { host: 'mail.acme-logistics.com', 'user-agent': 'zgrab/0.x', 'x-empty': '' },
        },
        raw: 'GET /.env HTTP/1.1\r\nHost: mail.acme-logistics.com\r\nUser-Agent: zgrab/0.x\r\n\r\n',
        source_ip: '203.0.113.7',
      },
      {
        timestamp: ms(2),
        tunnel_id: 4_000_000_000,
        domain: 'xn--bcher-kva.example',
        port: 8080,
        protocol: 'http',
        meta: meta('pool-ä'),
        details: { method: 'POST', uri: '/', version: 'HTTP/1.0', headers: {} },
        raw: '',
      },
    ],
    honeypot_https: [
      {
        timestamp: ms(3),
        tunnel_id: 13,
        domain: 'vpn.northwind-bank.com',
        port: 443,
        protocol: 'https',
        meta: meta(0),
        details: {
          sni: 'vpn.northwind-bank.com',
          ja4: 't13d1516h2_8daaf6152771_02713d6af862',
          cipher_suites: [{ code: 4865, name: 'TLS_AES_128_GCM_SHA256' }],
        },
        raw: Buffer.from([22, 3, 1, 0, 255, 0]).toString('base64'),
        source_ip: '2001:db8::1',
      },
      { timestamp: ms(4), tunnel_id: 14, domain: 'b.example', port: 8443, protocol: 'https', meta: meta('p'), details: null },
    ],
    honeypot_dns: [
      {
        timestamp: ms(5),
        tunnel_id: 15,
        domain: 'acme-logistics.com',
        port: 53,
        protocol: 'udp',
        meta: meta(3),
        qname: 'x7f3k2.acme-logistics.com',
        qtype: 'TXT',
        source_ip: '198.51.100.9',
      },
      {
        timestamp: ms(6),
        tunnel_id: 16,
        domain: 'acme-logistics.com',
        port: 853,
        meta: meta('dns-pool'),
        qname: 'acme-logistics.com',
        qtype: 'AAAA',
        source_ip: '2001:db8::53',
      },
    ],
    honeypot_adb: [
      { session: '3f9a0c1d2e4b5a69', sequential_id: 1, ...adb([0x73, 0x68, 0, 255, 10]), timestamp: ms(7), source_ip: '198.51.100.7' },
      { session: '3f9a0c1d2e4b5a69', sequential_id: 2, ...adb([]), timestamp: ms(8) },
    ],
    ja4t: [
      {
        ip: '109.176.45.49',
        ja4t: '43080_2-4-8-1-3_1436_9',
        provider: 'PROXYJET_DATACENTER',
        type: 'DATACENTER_PROXY',
        timestamp: s + 9,
        country_code: 'US',
        asn: 16276,
      },
      {
        ip: '2001:db8::9',
        ja4t: '65535_2_1440_0',
        provider: 'IPROYAL',
        type: 'RESIDENTIAL_PROXY',
        timestamp: s + 10,
        country_code: '',
        asn: 4_294_967_295,
      },
    ],
  };
}
