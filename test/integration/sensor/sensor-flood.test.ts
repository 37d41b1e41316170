import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { eventually, startSensorProcess } from '../../helpers/sensor-process.ts';
import { startServe } from '../../helpers/serve-process.ts';
import { openStream } from '../../helpers/stream-client.ts';
import { ensureRealDataset } from '../../helpers/test-dataset.ts';

const TOKEN = 'sensor-flood-operator-token-0123456789';
const DOMAIN = 'flood-test.example';
const MiB = 1_048_576;
const FLOOD_SHARE = 4 * MiB;

function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A connection that sends `bytes` of a head that never ends and stays open until the sensor closes it. */
function floodConnection(port: number, bytes: number): Socket {
  const s = connect(port, '127.0.0.1', () =>
    s.write(Buffer.concat([Buffer.from('GET /flood HTTP/1.1\r\nX-Fill: '), Buffer.alloc(bytes - 29, 0x61)])),
  );
  s.on('error', () => {});
  return s;
}

const get = (port: number, path: string) =>
  new Promise<number>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host: DOMAIN }, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });

describe('umbra sensor: a flood at one listener memory share', () => {
  it('should shed the flood past its share while another listener still records and uploads', async (t) => {
    const dataDir = tempDir(t, 'umbra-flood-srv-');
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
    const server = await startServe(t, dataDir, ['--demo'], { UMBRA_OPERATOR_TOKEN: TOKEN });
    const key = (await server.line(/demo API key \(every scope\): (\S+)/))[1]!;
    const stream = await openStream(server.port, '/api/v4/feeds/helio/http/stream', key);
    t.after(() => stream.close());

    const dir = tempDir(t, 'umbra-flood-');
    const sensor = await startSensorProcess(
      t,
      dir,
      {
        server: server.origin,
        identity: { proxy_ip: '198.51.100.31' },
        domains: [DOMAIN],
        limits: { max_buffered_bytes: 2 * FLOOD_SHARE },
        listeners: [
          // The per-source limits are raised so the flood, from one address, reaches the memory share.
          {
            protocol: 'http',
            name: 'flood',
            bind: '127.0.0.1',
            port: 0,
            public_port: 80,
            max_connections_per_source: 1000,
            idle_timeout_ms: 120_000,
            request_timeout_ms: 120_000,
            max_buffered_bytes: FLOOD_SHARE,
          },
          { protocol: 'http', name: 'quiet', bind: '127.0.0.1', port: 0, public_port: 8080 },
        ],
        spool: { dir: join(dir, 'spool') },
        upload: { linger_ms: 20 },
        health: { port: 0 },
      },
      { UMBRA_OPERATOR_TOKEN: TOKEN },
    );
    const listener = async (name: string) =>
      ((await sensor.health()).listeners as Array<Record<string, number> & { name: string }>).find((l) => l.name === name)!;

    // 100 connections of 60,000 bytes each: about 70 fit the 4 MiB share, the rest are shed.
    const flood = Array.from({ length: 100 }, () => floodConnection(sensor.ports.flood!, 60_000));
    t.after(() => {
      for (const s of flood) s.destroy();
    });
    // Each connection is either held whole or shed.
    const f = await eventually(
      async () => {
        const l = await listener('flood');
        return l.buffered_bytes === l.open_connections! * 60_000 && l.open_connections! + l.shed! === 100 ? l : undefined;
      },
      20_000,
      'every flood connection held or shed',
    );
    assert.ok(f.open_connections! >= 60 && f.open_connections! <= 69, `${f.open_connections} flood connections held`);
    assert.ok(f.buffered_bytes! > FLOOD_SHARE - 60_000 && f.buffered_bytes! <= FLOOD_SHARE, `buffered ${f.buffered_bytes}`);
    assert.equal(f.max_buffered_bytes, FLOOD_SHARE);
    // Full: a head bigger than what is left of the share is shed too.
    const late = floodConnection(sensor.ports.flood!, 60_000);
    await new Promise((r) => late.once('close', r));
    assert.equal((await listener('flood')).shed, f.shed! + 1);
    // The other listener, with the flood still held: 50 requests, each recorded and uploaded.
    for (let i = 0; i < 50; i++) assert.equal(await get(sensor.ports.quiet!, `/quiet/${i}`), 200);
    const records = (await stream.records(50, 20_000)) as Array<{ port: number; details: { uri: string } }>;
    assert.deepEqual(records.map((r) => r.details.uri).sort(), Array.from({ length: 50 }, (_, i) => `/quiet/${i}`).sort());
    assert.ok(records.every((r) => r.port === 8080));
    const health = await sensor.health();
    const q = (health.listeners as Array<Record<string, number> & { name: string }>).find((l) => l.name === 'quiet')!;
    assert.equal(q.shed, 0);
    assert.equal(q.records, 50);
    assert.ok(health.memory.buffered_bytes <= health.memory.max_buffered_bytes);
    const metrics = await (await fetch(`http://127.0.0.1:${sensor.healthPort}/metrics`)).text();
    assert.match(metrics, new RegExp(`umbra_sensor_shed_total\\{listener="flood",protocol="http",public_port="80"\\} ${f.shed! + 1}\n`));
    assert.match(metrics, /umbra_sensor_shed_total\{listener="quiet",protocol="http",public_port="8080"\} 0\n/);

    // The flood ends: each held connection is recorded as cut short, or dropped when its record finds
    // the share still full of the others' buffers (a record holds its own bytes until it is spooled);
    // every byte of the share comes back.
    for (const s of flood) s.end();
    const ended = await eventually(
      async () => {
        const l = await listener('flood');
        return l.buffered_bytes === 0 && l.records! + l.dropped! === f.open_connections ? l : undefined;
      },
      20_000,
      'the flood share released, each held connection recorded or dropped',
    );
    assert.ok(ended.records! > 0, JSON.stringify(ended));
    assert.equal(ended.shed, f.shed! + 1 + ended.dropped!);
    // Stopped before its spool directory is removed (it is still writing the flood's records).
    sensor.proc.kill('SIGKILL');
    await sensor.exited;
  });
});
