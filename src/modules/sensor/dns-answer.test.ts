import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as dnsPacket from 'dns-packet';
import { answerDnsQuery, qtypeName } from './dns-answer.ts';
import { type DnsListenerConfig, parseSensorConfig } from './sensor-config.ts';

const opts = {
  mode: 'decoy' as const,
  ipv4: '198.51.100.80',
  ttl: 60,
  maxFactor: 2,
  isDecoy: (n: string) => n === 'decoy.example' || n.endsWith('.decoy.example'),
};
const query = (name: string, type: string, flags = dnsPacket.RECURSION_DESIRED) =>
  dnsPacket.encode({ type: 'query', id: 4242, flags, questions: [{ type: type as 'A', name, class: 'IN' }] });

describe('DNS answers', () => {
  it('should answer a decoy name with the decoy address, other names NXDOMAIN, and refuse ANY', () => {
    const a = answerDnsQuery(query('WWW.Decoy.Example', 'A'), opts, true)!;
    assert.deepEqual([a.qname, a.qtype, a.rcode, a.truncated], ['www.decoy.example', 'A', 'NOERROR', false]);
    const decoded = dnsPacket.decode(a.response!);
    assert.equal(decoded.id, 4242);
    assert.deepEqual(
      decoded.answers!.map((x) => (x as { data: string }).data),
      ['198.51.100.80'],
    );
    assert.equal(answerDnsQuery(query('elsewhere.example', 'A'), opts, true)!.rcode, 'NXDOMAIN');
    assert.equal(answerDnsQuery(query('decoy.example', 'ANY'), opts, true)!.rcode, 'REFUSED');
    assert.equal(answerDnsQuery(query('.', 'NS'), opts, true)!.qname, '.');
  });

  it('should never answer over UDP with more than maxFactor times the query, truncating instead', () => {
    const q = query('x.decoy.example', 'A');
    const small = answerDnsQuery(q, { ...opts, maxFactor: 1 }, true)!;
    assert.equal(small.truncated, true);
    assert.ok(small.response!.length <= q.length);
    assert.equal(dnsPacket.decode(small.response!).flag_tc, true);
    // Over TCP the source cannot be spoofed: the whole answer goes.
    assert.equal(answerDnsQuery(q, { ...opts, maxFactor: 1 }, false)!.truncated, false);
  });

  it('should give no answer to bytes that are not a query: garbage, a response, a compression loop', () => {
    assert.equal(answerDnsQuery(Buffer.from('not dns at all'), opts, true), undefined);
    assert.equal(answerDnsQuery(Buffer.alloc(0), opts, true), undefined);
    const response = dnsPacket.encode({ type: 'response', id: 1, questions: [{ type: 'A', name: 'a.example' }] });
    assert.equal(answerDnsQuery(response, opts, true), undefined);
    // A header, one question whose name is a pointer to itself (offset 12): a loop if followed.
    const loop = Buffer.from([0, 1, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1]);
    assert.equal(answerDnsQuery(loop, opts, true), undefined);
    // Truncated in the middle of the question.
    assert.equal(answerDnsQuery(query('a.decoy.example', 'A').subarray(0, 20), opts, true), undefined);
  });

  it('should name unknown types as the feed accepts them', () => {
    assert.equal(qtypeName('UNKNOWN_65280'), 'TYPE65280');
    assert.equal(qtypeName('AAAA'), 'AAAA');
  });
});

describe('DNS amplification over UDP', () => {
  // What scanners and reflection attackers send: common types and ANY, short, long and maximal names,
  // under a decoy domain and elsewhere, without EDNS and with the EDNS records resolvers and dig send
  // (a 1232-byte buffer; 4096 with DO; a client cookie as dig 9.18 adds).
  const decoy = 'decoy.example';
  const label63 = 'l'.repeat(63);
  const names = [
    '.',
    decoy,
    `a.${decoy}`,
    `www.${decoy}`,
    `_dmarc.${decoy}`,
    `${label63}.${label63}.${decoy}`,
    // 253 characters, the longest name there is.
    `${label63}.${label63}.${label63}.${'m'.repeat(253 - 3 * 64 - decoy.length - 1)}.${decoy}`,
    'scan.example.net',
    '7.113.0.203.in-addr.arpa',
  ];
  const types = ['A', 'AAAA', 'TXT', 'MX', 'NS', 'SOA', 'CNAME', 'PTR', 'ANY'];
  // dns-packet's types want every OPT member; its encoder defaults the rest.
  const opt = (o: Record<string, unknown>) => ({ type: 'OPT', name: '.', ...o }) as unknown as dnsPacket.Answer;
  const edns: Array<dnsPacket.Answer[]> = [
    [],
    [opt({ udpPayloadSize: 1232 })],
    [opt({ udpPayloadSize: 4096, flags: dnsPacket.DNSSEC_OK })],
    [opt({ udpPayloadSize: 1232, options: [{ code: 10, data: Buffer.from('0123456789abcdef', 'hex') }] })],
  ];
  const mix = names.flatMap((name) =>
    types.flatMap((type) =>
      edns.map((additionals) => ({
        name,
        type,
        bytes: dnsPacket.encode({
          type: 'query',
          id: 1,
          flags: dnsPacket.RECURSION_DESIRED,
          questions: [{ type: type as 'A', name }],
          additionals,
        }),
      })),
    ),
  );

  it('should keep every answer of a realistic query mix within max_amplification of its query, and still give the decoy addresses', (t) => {
    const { max_amplification: factor } = parseSensorConfig({
      identity: { proxy_ip: '198.51.100.1' },
      domains: [decoy],
      listeners: [{ protocol: 'dns', port: 53 }],
    }).listeners[0] as DnsListenerConfig;
    assert.equal(factor, 2, 'the default the docs state');
    const o = { ...opts, ipv6: '2001:db8::80', maxFactor: factor };
    const factors: number[] = [];
    let worst = '';
    let truncatedDecoys = 0;
    for (const q of mix) {
      const out = answerDnsQuery(q.bytes, o, true)!;
      assert.ok(out, `${q.name} ${q.type} is a query`);
      const size = out.response?.length ?? 0;
      assert.ok(size <= factor * q.bytes.length, `${q.name} ${q.type}: ${size} > ${factor} x ${q.bytes.length}`);
      if (size / q.bytes.length > Math.max(0, ...factors)) worst = `${q.type} ${q.name.slice(0, 20)} ${size}/${q.bytes.length}`;
      factors.push(size / q.bytes.length);
      const isDecoyAddress = q.name.endsWith(decoy) && (q.type === 'A' || q.type === 'AAAA');
      if (isDecoyAddress && out.truncated) truncatedDecoys++;
      if (q.type === 'ANY') assert.equal(out.rcode, 'REFUSED');
      // The bound holds for any configured factor, the smallest too.
      for (const f of [1, 4]) {
        const r = answerDnsQuery(q.bytes, { ...o, maxFactor: f }, true)!;
        assert.ok((r.response?.length ?? 0) <= f * q.bytes.length, `${q.name} ${q.type} at ${f}`);
      }
    }
    // The answer's name is a pointer to the question's, so even a query without EDNS for a name under
    // the decoy gets its address (AAAA too) rather than a truncated answer.
    assert.equal(truncatedDecoys, 0, 'decoy addresses truncated');
    const max = Math.max(...factors);
    const mean = factors.reduce((a, b) => a + b, 0) / factors.length;
    assert.ok(max <= factor);
    t.diagnostic(
      `${mix.length} queries: response/query bytes max ${max.toFixed(2)}, mean ${mean.toFixed(2)} (cap ${factor}); the largest: ${worst}`,
    );
  });
});
