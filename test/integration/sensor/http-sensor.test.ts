import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { eventually, requireTool, startSensorProcess } from '../../helpers/sensor-process.ts';
import { startServe } from '../../helpers/serve-process.ts';
import { openStream } from '../../helpers/stream-client.ts';
import { ensureRealDataset } from '../../helpers/test-dataset.ts';

const TOKEN = 'sensor-test-operator-token-0123456789';
const DOMAIN = 'decoy-sensor.example';

function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

export function sensorConfig(server: string, dir: string, extra: Record<string, unknown> = {}) {
  return {
    server,
    identity: { tunnel_id: 9001, pool_id: 'lab', provider: 'SELF_HOSTED', proxy_ip: '198.51.100.23', server: 'sensor-test-1' },
    domains: [DOMAIN],
    listeners: [{ protocol: 'http', bind: '127.0.0.1', port: 0, public_port: 80 }],
    spool: { dir: join(dir, 'spool') },
    upload: { linger_ms: 20 },
    health: { port: 0 },
    ...extra,
  };
}

/** One request through node's http client; status, headers and body as received. */
function nodeRequest(port: number, method: string, path: string, headers: Record<string, string>, body?: string) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Raw bytes on a TCP connection (a malformed request no HTTP client would send); the whole answer. */
function rawExchange(port: number, bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.end(bytes, 'latin1'));
    let text = '';
    s.setEncoding('latin1').on('data', (c: string) => (text += c));
    s.on('close', () => resolve(text));
    s.on('error', reject);
  });
}

describe('umbra sensor: the HTTP listener end to end', () => {
  it('should record requests from curl, node and a malformed client, upload them, and show them in the stream and the domain lookup', async (t) => {
    const curl = requireTool('curl');
    const dataDir = tempDir(t, 'umbra-sensor-srv-');
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
    const server = await startServe(t, dataDir, ['--demo'], { UMBRA_OPERATOR_TOKEN: TOKEN });
    const key = (await server.line(/demo API key \(every scope\): (\S+)/))[1]!;
    const stream = await openStream(server.port, '/api/v4/feeds/helio/http/stream', key);
    assert.equal(stream.status, 200);
    t.after(() => stream.close());

    const dir = tempDir(t, 'umbra-sensor-');
    const sensor = await startSensorProcess(t, dir, sensorConfig(server.origin, dir), { UMBRA_OPERATOR_TOKEN: TOKEN });
    const port = sensor.ports['http-80']!;
    assert.ok(port > 0, sensor.stderr.join('\n'));

    // curl, as a scanner would: a subdomain of the decoy in Host, a probe path, its own headers.
    const c = spawnSync(
      curl,
      [
        '-s',
        '-i',
        '--max-time',
        '10',
        '-H',
        `Host: admin.${DOMAIN}`,
        '-H',
        'X-Probe: curl-1',
        `http://127.0.0.1:${port}/cgi-bin/luci;stok=/locale?x=1`,
      ],
      { encoding: 'latin1' },
    );
    assert.equal(c.status, 0, c.stderr);
    assert.match(c.stdout, /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(c.stdout, /\r\nServer: nginx\/1\.24\.0\r\n/);
    assert.match(c.stdout, /Welcome to nginx!/);

    // node's http client with a body.
    const n = await nodeRequest(
      port,
      'POST',
      '/upload.php',
      { 'x-probe': 'node-1', 'content-type': 'text/plain', host: DOMAIN },
      'node-body-1',
    );
    assert.equal(n.status, 200);
    assert.equal(n.headers.server, 'nginx/1.24.0');

    // Not HTTP at all past its first line: recorded as far as it parses, answered 400.
    const bad = await rawExchange(port, `GET /../../etc/passwd HTTP/1.1\r\nthis line has no colon\r\nHost: ${DOMAIN}\r\n\r\n`);
    assert.match(bad, /^HTTP\/1\.1 400 Bad Request\r\n/);

    const records = (await stream.records(3, 20_000)) as Array<Record<string, any>>;
    const byProbe = (uri: string) => records.find((r) => r.details.uri === uri);
    const fromCurl = byProbe('/cgi-bin/luci;stok=/locale?x=1')!;
    assert.ok(fromCurl, JSON.stringify(records));
    assert.deepEqual(
      {
        domain: fromCurl.domain,
        port: fromCurl.port,
        protocol: fromCurl.protocol,
        tunnel_id: fromCurl.tunnel_id,
        meta: fromCurl.meta,
        source_ip: fromCurl.source_ip,
        method: fromCurl.details.method,
        version: fromCurl.details.version,
        probe: fromCurl.details.headers['X-Probe'],
        host: fromCurl.details.headers.Host,
      },
      {
        domain: DOMAIN,
        port: 80,
        protocol: 'http',
        tunnel_id: 9001,
        meta: { proxy_ip: '198.51.100.23', server: 'sensor-test-1', pool_id: 'lab', provider: 'SELF_HOSTED' },
        source_ip: '127.0.0.1',
        method: 'GET',
        version: 'HTTP/1.1',
        probe: 'curl-1',
        host: `admin.${DOMAIN}`,
      },
    );
    assert.match(fromCurl.raw, /^GET \/cgi-bin\/luci;stok=\/locale\?x=1 HTTP\/1\.1\r\nHost: admin\.decoy-sensor\.example\r\n/);
    assert.ok(Math.abs(fromCurl.timestamp - Date.now()) < 60_000, 'milliseconds, now');
    const fromNode = byProbe('/upload.php')!;
    assert.equal(fromNode.details.method, 'POST');
    assert.equal(fromNode.details.headers['x-probe'], 'node-1');
    assert.ok(fromNode.raw.endsWith('\r\n\r\nnode-body-1'), fromNode.raw);
    const malformed = byProbe('/../../etc/passwd')!;
    assert.equal(malformed.details.headers.Host, DOMAIN, 'headers after the bad line are kept');
    assert.ok(malformed.raw.includes('this line has no colon'));

    // The domain lookup counts them (the observer learns from the same ingest).
    const lookup = await eventually(
      async () => {
        const res = await fetch(`${server.origin}/api/v4/lookup/domain/${DOMAIN}`, { headers: { 'x-api-key': key } });
        const body = (await res.json()) as { data: { stats: { events_24h: number }; top_ports: Array<{ port: number }> } };
        return body.data.stats.events_24h >= 3 ? body : undefined;
      },
      10_000,
      'the domain lookup counting the three requests',
    );
    assert.equal(lookup.data.stats.events_24h, 3);
    assert.deepEqual(
      lookup.data.top_ports.map((p) => p.port),
      [80],
    );

    const health = await eventually(
      async () => {
        const h = await sensor.health();
        return h.upload[0].uploaded === 3 && h.spool.records === 0 ? h : undefined;
      },
      10_000,
      'health showing the three records uploaded',
    );
    assert.equal(health.status, 'ok');
    assert.deepEqual(
      {
        records: health.listeners[0].records,
        malformed: health.listeners[0].malformed,
        public_port: health.listeners[0].public_port,
        rejected: health.upload[0].rejected,
      },
      { records: 3, malformed: 1, public_port: 80, rejected: 0 },
    );
    const metrics = await (await fetch(`http://127.0.0.1:${sensor.healthPort}/metrics`)).text();
    assert.match(metrics, /^umbra_sensor_records_total\{listener="http-80",protocol="http",public_port="80"\} 3$/m);
    assert.match(metrics, /^umbra_sensor_uploaded_records_total\{feed="honeypot_http"\} 3$/m);
    assert.match(metrics, /^umbra_sensor_spool_records 0$/m);
  });

  it('should print records to stdout with --dry-run and need no server or token', async (t) => {
    const curl = requireTool('curl');
    const dir = tempDir(t, 'umbra-sensor-dry-');
    const sensor = await startSensorProcess(t, dir, sensorConfig('http://127.0.0.1:1', dir), { UMBRA_OPERATOR_TOKEN: '' }, ['--dry-run']);
    const port = sensor.ports['http-80']!;
    const c = spawnSync(curl, ['-s', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${port}/.env`], { encoding: 'utf8' });
    assert.equal(c.stdout, '200', c.stderr);
    const line = await eventually(() => sensor.stdout.find((l) => l.includes('/.env')), 5000, 'the record on stdout');
    const printed = JSON.parse(line) as { feed: string; record: { details: { uri: string }; port: number } };
    assert.equal(printed.feed, 'honeypot_http');
    assert.equal(printed.record.details.uri, '/.env');
    assert.equal(printed.record.port, 80);
    const h = await sensor.health();
    assert.equal(h.dry_run, true);
    assert.equal(h.spool, null);
  });
});
