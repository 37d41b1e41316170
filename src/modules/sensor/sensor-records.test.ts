import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseHttpHead } from './http-head.ts';
import { DnsRecordEncoder, dnsRecord, HttpRecordEncoder, httpRecord, RAW_LIMIT } from './sensor-records.ts';

const IDENTITY = { tunnel_id: 7, pool_id: 'pool "a"', provider: 'SELF_HOSTED', proxy_ip: '198.51.100.1', server: 'unit\u2028' };

describe('honeypot_http records', () => {
  it('should encode the same JSON text as the record object, whatever bytes the attacker sent', () => {
    const raw = Buffer.concat([
      Buffer.from('GET /a"b\\c\u0000?x=<script> HTTP/1.1\r\nHost: unit.example\r\nX-\u00e9: "q"\t\u0001\r\nX-Bin: '),
      Buffer.from([0x80, 0xff, 0x7f, 0x0a, 0x22, 0x5c]),
      Buffer.from('\r\n\r\nbody\u0000'),
    ]);
    const head = parseHttpHead(raw.subarray(0, raw.indexOf('\r\n\r\n') + 4));
    const encoder = new HttpRecordEncoder(IDENTITY);
    for (const protocol of ['http', 'https'] as const) {
      const c = { timestampMs: 1_764_000_000_123.9, domain: 'unit.example', port: 8080, protocol, sourceIp: '2001:db8::1', head, raw };
      const text = encoder.encode(c).toString();
      assert.equal(text, JSON.stringify(httpRecord(IDENTITY, c).record));
      assert.deepEqual(Buffer.from((JSON.parse(text) as { raw: string }).raw, 'latin1'), raw, 'the raw bytes come back exactly');
    }
  });

  it('should cut raw at the schema limit as the record object does', () => {
    const raw = Buffer.alloc(RAW_LIMIT + 10, 0x41);
    const head = parseHttpHead(Buffer.from('POST / HTTP/1.1\r\n\r\n'));
    const c = { timestampMs: 1, domain: 'd.example', port: 80, protocol: 'http' as const, sourceIp: '203.0.113.1', head, raw };
    const text = new HttpRecordEncoder(IDENTITY).encode(c).toString();
    assert.equal((JSON.parse(text) as { raw: string }).raw.length, RAW_LIMIT);
    assert.equal(text, JSON.stringify(httpRecord(IDENTITY, c).record));
  });
});

describe('honeypot_dns records', () => {
  it('should encode the same JSON text as the record object, whatever name the query carried', () => {
    const encoder = new DnsRecordEncoder(IDENTITY);
    const names = ['www.decoy.example', 'a"b\\c.example', 'ctl\u0001\u001f.example', 'caf\u00e9.\u2028.example', '.', 'x'.repeat(253)];
    for (const qname of names)
      for (const protocol of ['udp', 'tcp'] as const) {
        const c = {
          timestampMs: 1_764_000_000_999.9,
          domain: 'decoy.example',
          port: 53 as const,
          protocol,
          sourceIp: '2001:db8::7',
          qname,
          qtype: 'TYPE65535',
        };
        assert.equal(encoder.encode(c).toString(), JSON.stringify(dnsRecord(IDENTITY, c).record));
      }
  });
});
