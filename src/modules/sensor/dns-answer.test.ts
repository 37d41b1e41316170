import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as dnsPacket from 'dns-packet';
import { answerDnsQuery, qtypeName } from './dns-answer.ts';

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
