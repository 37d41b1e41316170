import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { Resolver } from 'node:dns/promises';
import { tmpdir } from 'node:os';
import { connect as tlsConnect } from 'node:tls';
import * as dnsPacket from 'dns-packet';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { eventually, requireTool, startSensorProcess } from '../../helpers/sensor-process.ts';
import { startServe } from '../../helpers/serve-process.ts';
import { openStream } from '../../helpers/stream-client.ts';
import { ensureRealDataset } from '../../helpers/test-dataset.ts';

const TOKEN = 'sensor-dns-operator-token-0123456789';
const DOMAIN = 'decoy-dns.example';

function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** One dig run: its status, answers, and the sizes of the query and the response (+qr prints both). */
function dig(digPath: string, port: number, args: string[]) {
  const r = spawnSync(digPath, ['@127.0.0.1', '-p', String(port), '+qr', '+time=3', '+tries=1', ...args], { encoding: 'utf8' });
  assert.equal(r.status, 0, `dig ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  const status = /status: (\w+)/.exec(r.stdout.split(';; Got answer:')[1] ?? '')?.[1];
  const query = Number(/;; QUERY SIZE: (\d+)/.exec(r.stdout)?.[1]);
  const response = Number(/;; MSG SIZE {2}rcvd: (\d+)/.exec(r.stdout)?.[1]);
  const answers = [...r.stdout.matchAll(/^(\S+)\s+\d+\s+IN\s+(A|AAAA)\s+(\S+)$/gm)].map((m) => m[3]!);
  return { status, query, response, answers, out: r.stdout };
}

describe('umbra sensor: the DNS listener end to end', () => {
  it('should answer dig and node over UDP, TCP and TLS, refuse ANY, never amplify past its factor, and record every query', async (t) => {
    const digPath = requireTool('dig');
    const dataDir = tempDir(t, 'umbra-sensor-dns-srv-');
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
    const server = await startServe(t, dataDir, ['--demo'], { UMBRA_OPERATOR_TOKEN: TOKEN });
    const key = (await server.line(/demo API key \(every scope\): (\S+)/))[1]!;
    const stream = await openStream(server.port, '/api/v4/feeds/helio/dns/stream', key);
    t.after(() => stream.close());

    const dir = tempDir(t, 'umbra-sensor-dns-');
    const sensor = await startSensorProcess(
      t,
      dir,
      {
        server: server.origin,
        identity: { tunnel_id: 53, proxy_ip: '198.51.100.53' },
        domains: [DOMAIN],
        listeners: [
          { protocol: 'dns', bind: '127.0.0.1', port: 0, public_port: 53, answer: 'decoy', decoy_ipv4: '198.51.100.80' },
          // DNS over TLS: the same answers behind a handshake with a self-signed certificate.
          { protocol: 'dns', tls: true, bind: '127.0.0.1', port: 0, public_port: 853, answer: 'decoy', decoy_ipv4: '198.51.100.80' },
        ],
        spool: { dir: join(dir, 'spool') },
        upload: { linger_ms: 20 },
        health: { port: 0 },
      },
      { UMBRA_OPERATOR_TOKEN: TOKEN },
    );
    const port = sensor.ports['dns-53']!;
    const dotPort = sensor.ports['dot-853']!;

    const sizes: Array<{ what: string; query: number; response: number }> = [];
    const udpA = dig(digPath, port, ['+notcp', `www.${DOMAIN}`, 'A']);
    assert.deepEqual([udpA.status, udpA.answers], ['NOERROR', ['198.51.100.80']]);
    sizes.push({ what: 'A (decoy answer)', query: udpA.query, response: udpA.response });
    const tcpA = dig(digPath, port, ['+tcp', `mail.${DOMAIN}`, 'A']);
    assert.deepEqual([tcpA.status, tcpA.answers], ['NOERROR', ['198.51.100.80']]);
    const nx = dig(digPath, port, ['+notcp', 'not-a-decoy.example.org', 'A']);
    assert.equal(nx.status, 'NXDOMAIN');
    sizes.push({ what: 'NXDOMAIN', query: nx.query, response: nx.response });
    const any = dig(digPath, port, ['+notcp', DOMAIN, 'ANY']);
    assert.equal(any.status, 'REFUSED');
    sizes.push({ what: 'ANY (refused)', query: any.query, response: any.response });
    const txt = dig(digPath, port, ['+notcp', '+noedns', `_dmarc.${DOMAIN}`, 'TXT']);
    assert.equal(txt.status, 'NOERROR');
    sizes.push({ what: 'TXT without EDNS', query: txt.query, response: txt.response });
    const longName = dig(digPath, port, ['+notcp', '+noedns', `${'a'.repeat(60)}.${'b'.repeat(60)}.${DOMAIN}`, 'A']);
    assert.equal(longName.status, 'NOERROR');
    sizes.push({ what: 'A of a long name, no EDNS', query: longName.query, response: longName.response });
    for (const s of sizes) assert.ok(s.response <= 2 * s.query, `${s.what}: ${s.response} > 2 x ${s.query}`);
    const factor = Math.max(...sizes.map((s) => s.response / s.query));
    t.diagnostic(
      `amplification (response/query bytes, UDP): ${sizes.map((s) => `${s.what} ${s.response}/${s.query}`).join('; ')}; max ${factor.toFixed(2)}`,
    );

    // node's resolver, over UDP (and TCP when it retries): the decoy address; ANY refused.
    const resolver = new Resolver({ timeout: 3000, tries: 1 });
    resolver.setServers([`127.0.0.1:${port}`]);
    assert.deepEqual(await resolver.resolve4(`api.${DOMAIN}`), ['198.51.100.80']);
    await assert.rejects(resolver.resolveAny(DOMAIN), { code: 'EREFUSED' });
    await assert.rejects(resolver.resolve4('elsewhere.example.net'), { code: 'ENOTFOUND' });

    // DNS over TLS: dig +tls (which does not check the certificate unless asked), and node's tls.connect
    // with a framed query and the SNI of a decoy name.
    const dotA = dig(digPath, dotPort, ['+tls', `dot.${DOMAIN}`, 'A']);
    assert.deepEqual([dotA.status, dotA.answers], ['NOERROR', ['198.51.100.80']]);
    const dotNx = dig(digPath, dotPort, ['+tls', 'dot-elsewhere.example.org', 'AAAA']);
    assert.equal(dotNx.status, 'NXDOMAIN');
    // Plain DNS on the DNS over TLS port: no answer (dig fails), nothing recorded, the sensor keeps serving.
    const plain = spawnSync(digPath, ['@127.0.0.1', '-p', String(dotPort), '+tcp', '+time=2', '+tries=1', `plain.${DOMAIN}`, 'A'], {
      encoding: 'utf8',
    });
    assert.notEqual(plain.status, 0, `plain DNS answered on the TLS port: ${plain.stdout}`);
    const viaNode = await new Promise<dnsPacket.DecodedPacket>((resolve, reject) => {
      const s = tlsConnect({ host: '127.0.0.1', port: dotPort, servername: `ns.${DOMAIN}`, rejectUnauthorized: false }, () => {
        const q = dnsPacket.encode({
          type: 'query',
          id: 853,
          flags: dnsPacket.RECURSION_DESIRED,
          questions: [{ type: 'A', name: `tls-node.${DOMAIN}` }],
        });
        const len = Buffer.alloc(2);
        len.writeUInt16BE(q.length, 0);
        s.write(Buffer.concat([len, q]));
      });
      let buf = Buffer.alloc(0);
      s.on('data', (c: Buffer) => {
        buf = Buffer.concat([buf, c]);
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0)) {
          s.end();
          resolve(dnsPacket.decode(buf.subarray(2, 2 + buf.readUInt16BE(0))));
        }
      });
      s.once('error', reject);
    });
    assert.deepEqual(
      [viaNode.id, (viaNode as { rcode?: string }).rcode, (viaNode.answers?.[0] as { data?: string } | undefined)?.data],
      [853, 'NOERROR', '198.51.100.80'],
    );

    const records = (await stream.records(12, 20_000)) as Array<Record<string, any>>;
    const find = (qname: string, qtype: string) => records.find((r) => r.qname === qname && r.qtype === qtype);
    const udpRec = find(`www.${DOMAIN}`, 'A')!;
    assert.deepEqual(
      [udpRec.domain, udpRec.port, udpRec.protocol, udpRec.tunnel_id, udpRec.source_ip, udpRec.meta.proxy_ip],
      [DOMAIN, 53, 'udp', 53, '127.0.0.1', '198.51.100.53'],
    );
    assert.equal(find(`mail.${DOMAIN}`, 'A')!.protocol, 'tcp');
    assert.ok(find(DOMAIN, 'ANY'), 'refused queries are recorded too');
    assert.equal(find('not-a-decoy.example.org', 'A')!.domain, DOMAIN, 'a name outside the decoys is filed under the first decoy');
    assert.ok(find(`api.${DOMAIN}`, 'A'));
    for (const [qname, qtype] of [
      [`dot.${DOMAIN}`, 'A'],
      ['dot-elsewhere.example.org', 'AAAA'],
      [`tls-node.${DOMAIN}`, 'A'],
    ] as const) {
      const r = find(qname, qtype);
      assert.deepEqual([r?.port, r?.protocol, r?.domain], [853, 'tcp', DOMAIN], `${qname} ${qtype} over TLS`);
    }
    assert.equal(find(`plain.${DOMAIN}`, 'A'), undefined, 'plain DNS on the TLS port is not recorded');

    const lookup = await eventually(
      async () => {
        const res = await fetch(`${server.origin}/api/v4/lookup/domain/${DOMAIN}`, { headers: { 'x-api-key': key } });
        const body = (await res.json()) as { data: { stats: { events_24h: number }; top_subdomains: Array<{ subdomain: string }> } };
        return body.data.stats.events_24h >= 12 ? body : undefined;
      },
      10_000,
      'the domain lookup counting the queries',
    );
    assert.ok(lookup.data.top_subdomains.some((s) => s.subdomain === `www.${DOMAIN}`));
    const h = await sensor.health();
    assert.equal(h.listeners[0].refused_any, 2);
    assert.deepEqual([h.listeners[1].name, h.listeners[1].records, h.listeners[1].tls_failed], ['dot-853', 3, 1]);
  });
});
