import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { eventually, requireTool, startSensorProcess } from '../../helpers/sensor-process.ts';
import { startServe } from '../../helpers/serve-process.ts';
import { openStream } from '../../helpers/stream-client.ts';
import { ensureRealDataset } from '../../helpers/test-dataset.ts';

const TOKEN = 'sensor-tls-operator-token-0123456789';
const DOMAIN = 'decoy-tls.example';
const JA4_PY = join(import.meta.dirname, '../../external/ja4.py');

function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** GET over node's tls.connect; the answer's text once the server closes. */
function nodeTlsGet(port: number, servername: string, path: string): Promise<{ text: string; subject: string }> {
  return new Promise((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port, servername, rejectUnauthorized: false }, () => {
      s.end(`GET ${path} HTTP/1.1\r\nHost: ${servername}\r\nConnection: close\r\n\r\n`);
    });
    let text = '';
    let subject = '';
    s.once('secureConnect', () => (subject = String(s.getPeerCertificate().subject?.CN)));
    s.setEncoding('latin1').on('data', (c: string) => (text += c));
    s.on('close', () => resolve({ text, subject }));
    s.on('error', reject);
  });
}

describe('umbra sensor: the TLS listener end to end', () => {
  it('should record the ClientHellos of openssl, node and curl with the JA4 an independent implementation computes, and the HTTP inside', async (t) => {
    const curl = requireTool('curl');
    const openssl = requireTool('openssl');
    const python = process.env.UMBRA_PYTHON ?? requireTool('python3');
    const dataDir = tempDir(t, 'umbra-sensor-tls-srv-');
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
    const server = await startServe(t, dataDir, ['--demo'], { UMBRA_OPERATOR_TOKEN: TOKEN });
    const key = (await server.line(/demo API key \(every scope\): (\S+)/))[1]!;
    const hellos = await openStream(server.port, '/api/v4/feeds/helio/https/stream', key);
    const requests = await openStream(server.port, '/api/v4/feeds/helio/http/stream', key);
    t.after(() => {
      hellos.close();
      requests.close();
    });

    const dir = tempDir(t, 'umbra-sensor-tls-');
    const sensor = await startSensorProcess(
      t,
      dir,
      {
        server: server.origin,
        identity: { tunnel_id: 77, proxy_ip: '198.51.100.30' },
        domains: [DOMAIN],
        listeners: [{ protocol: 'tls', bind: '127.0.0.1', port: 0, public_port: 443 }],
        spool: { dir: join(dir, 'spool') },
        upload: { linger_ms: 20 },
        health: { port: 0 },
      },
      { UMBRA_OPERATOR_TOKEN: TOKEN },
    );
    const port = sensor.ports['tls-443']!;

    // openssl s_client: the handshake completes with a certificate made for the SNI.
    const o = spawnSync(openssl, ['s_client', '-connect', `127.0.0.1:${port}`, '-servername', `o.${DOMAIN}`, '-ign_eof'], {
      input: `GET /from-openssl HTTP/1.1\r\nHost: o.${DOMAIN}\r\nConnection: close\r\n\r\n`,
      encoding: 'latin1',
      timeout: 15_000,
    });
    assert.match(o.stdout, new RegExp(`subject=CN\\s?=\\s?o\\.${DOMAIN.replace('.', '\\.')}`), o.stdout + o.stderr);
    assert.match(o.stdout, /HTTP\/1\.1 200 OK/);
    // node's tls client.
    const n = await nodeTlsGet(port, `n.${DOMAIN}`, '/from-node');
    assert.equal(n.subject, `n.${DOMAIN}`);
    assert.match(n.text, /^HTTP\/1\.1 200 OK\r\n[\s\S]*Welcome to nginx!/);
    // curl over TLS (-k: the certificate is self-signed).
    const c = spawnSync(
      curl,
      ['-sk', '--max-time', '10', '--resolve', `c.${DOMAIN}:${port}:127.0.0.1`, `https://c.${DOMAIN}:${port}/from-curl`],
      { encoding: 'utf8' },
    );
    assert.equal(c.status, 0, c.stderr);
    assert.match(c.stdout, /Welcome to nginx!/);
    // A certificate is made only under the decoy domains: another name gets the first decoy domain's.
    assert.equal((await nodeTlsGet(port, 'attacker-chosen.example.org', '/other')).subject, DOMAIN);
    // Not TLS: recorded with details null, then closed.
    await new Promise<void>((resolve) => {
      const s = netConnect(port, '127.0.0.1', () => s.end('SSH-2.0-OpenSSH_9.2\r\n'));
      s.on('close', () => resolve());
      s.on('error', () => resolve());
      s.resume();
    });

    const got = (await hellos.records(5, 20_000)) as Array<Record<string, any>>;
    const bySni = new Map(got.filter((r) => r.details).map((r) => [r.details.sni as string, r]));
    for (const sni of [`o.${DOMAIN}`, `n.${DOMAIN}`, `c.${DOMAIN}`]) {
      const r = bySni.get(sni);
      assert.ok(r, `a hello with SNI ${sni} in ${JSON.stringify(got.map((g) => g.details?.sni))}`);
      assert.deepEqual([r.domain, r.port, r.protocol, r.tunnel_id, r.source_ip], [DOMAIN, 443, 'https', 77, '127.0.0.1']);
      assert.match(r.details.ja4, /^t1[23]d\d{4}[0-9a-z]{2}_[0-9a-f]{12}_[0-9a-f]{12}$/);
      // The JA4 again, from the captured raw bytes, by the Python implementation.
      const py = spawnSync(python, [JA4_PY, r.raw], { encoding: 'utf8' });
      assert.equal(py.status, 0, py.stderr);
      assert.equal(py.stdout.trim(), r.details.ja4, `JA4 of ${sni}`);
    }
    assert.notEqual(bySni.get(`o.${DOMAIN}`)!.details.ja4, bySni.get(`n.${DOMAIN}`)!.details.ja4, 'openssl and node differ');
    const notTls = got.find((r) => r.details === null)!;
    assert.equal(Buffer.from(notTls.raw, 'base64').toString(), 'SSH-2.0-OpenSSH_9.2\r\n');

    const inner = (await requests.records(4, 20_000)) as Array<Record<string, any>>;
    const uris = inner.map((r) => r.details.uri).sort();
    assert.deepEqual(uris, ['/from-curl', '/from-node', '/from-openssl', '/other']);
    for (const r of inner) assert.deepEqual([r.protocol, r.port, r.domain], ['https', 443, DOMAIN]);

    const lookup = await eventually(
      async () => {
        const res = await fetch(`${server.origin}/api/v4/lookup/domain/${DOMAIN}`, { headers: { 'x-api-key': key } });
        const body = (await res.json()) as { data: { stats: { events_24h: number } } };
        return body.data.stats.events_24h >= 9 ? body : undefined;
      },
      10_000,
      'the domain lookup counting five hellos and four requests',
    );
    assert.equal(lookup.data.stats.events_24h, 9);
    const h = await sensor.health();
    assert.deepEqual([h.listeners[0].records, h.listeners[0].malformed, h.listeners[0].http_records], [5, 1, 4]);
  });
});
