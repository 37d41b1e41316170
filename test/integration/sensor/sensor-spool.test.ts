import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { eventually, freePort, startSensorProcess, type SensorProcess } from '../../helpers/sensor-process.ts';
import { startServe } from '../../helpers/serve-process.ts';
import { openStream, type StreamClient } from '../../helpers/stream-client.ts';
import { TcpGate } from '../../helpers/tcp-gate.ts';
import { ensureRealDataset } from '../../helpers/test-dataset.ts';

const TOKEN = 'sensor-spool-operator-token-0123456789';
const DOMAIN = 'spool-test.example';
const TOTAL = 1000;

function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** GET /spool/<i> for i in [from, to) through node's http client, `parallel` at a time; every one must be answered 200. */
async function send(port: number, from: number, to: number, parallel = 8): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: parallel });
  let next = from;
  const one = (i: number) =>
    new Promise<void>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, path: `/spool/${i}`, agent, headers: { host: DOMAIN } }, (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`request ${i}: ${res.statusCode}`))));
      });
      req.on('error', reject);
      req.end();
    });
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < to) await one(next++);
    }),
  );
  agent.destroy();
}

/** The ids of /spool/<i> requests in the records a stream delivered. */
const idsOf = (s: StreamClient): number[] =>
  s.lines.filter(Boolean).map((l) => Number((JSON.parse(l) as { details: { uri: string } }).details.uri.split('/')[2]));

describe('umbra sensor: the spool', () => {
  it('should deliver 1,000 requests exactly once through lost answers, a SIGKILL of the sensor and a stopped server', async (t) => {
    const dataDir = tempDir(t, 'umbra-spool-srv-');
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
    const env = { UMBRA_OPERATOR_TOKEN: TOKEN };
    const first = await startServe(t, dataDir, ['--demo'], env);
    const key = (await first.line(/demo API key \(every scope\): (\S+)/))[1]!;
    const streams = [await openStream(first.port, '/api/v4/feeds/helio/http/stream', key)];
    t.after(() => {
      for (const s of streams) s.close();
    });
    // The sensor talks to the server through a gate on a fixed port, which stays while servers come and go.
    const gate = new TcpGate(await freePort());
    t.after(() => gate.close());
    await gate.open(first.port);

    const dir = tempDir(t, 'umbra-spool-');
    const config = {
      server: `http://127.0.0.1:${gate.port}`,
      identity: { proxy_ip: '198.51.100.24' },
      domains: [DOMAIN],
      listeners: [{ protocol: 'http', bind: '127.0.0.1', port: await freePort(), public_port: 80 }],
      spool: { dir: join(dir, 'spool') },
      upload: { linger_ms: 20, batch_records: 100 },
      health: { port: 0 },
    };
    let sensor: SensorProcess = await startSensorProcess(t, dir, config, env);
    const port = sensor.ports['http-80']!;

    // 1. Everything up: 250 requests.
    await send(port, 0, 250);
    await eventually(async () => ((await sensor.health()).upload[0].uploaded === 250 ? true : undefined), 20_000, '250 uploaded');

    // 2. Answers lost: the server stores each batch, the sensor never hears so and keeps the batch.
    gate.mode = 'drop-answers';
    await send(port, 250, 500);
    await eventually(async () => ((await sensor.health()).upload[0].failures >= 2 ? true : undefined), 20_000, 'uploads failing');
    assert.ok(gate.dropped >= 1);
    // ... and the sensor is killed with its batch in flight, then started again on the same spool.
    sensor.proc.kill('SIGKILL');
    await sensor.exited;
    gate.mode = 'open';
    sensor = await startSensorProcess(t, dir, config, env);
    assert.equal(sensor.ports['http-80'], port);
    await eventually(
      async () => ((await sensor.health()).spool.records === 0 ? true : undefined),
      30_000,
      'the spool drained after the restart',
    );
    const resent = await sensor.health();
    assert.ok(resent.upload[0].replayed_batches >= 1, `a resent batch was answered as a replay: ${JSON.stringify(resent.upload)}`);

    // 3. The server stopped (killed) while 500 more requests come in: they wait in the spool.
    await gate.close();
    first.proc.kill('SIGKILL');
    await first.exited;
    await send(port, 500, TOTAL);
    // An answer follows the record's write, its fsync (which counts it as spooled) comes right after.
    const waiting = await eventually(
      async () => {
        const h = await sensor.health();
        return h.spool.records >= 500 ? h : undefined;
      },
      5_000,
      '500 spooled',
    );
    assert.equal(waiting.spool.records, 500, JSON.stringify(waiting));
    assert.ok(waiting.upload[0].consecutive_failures >= 1);

    // 4. The server back (a new process on the same data dir): the spool is sent, in order.
    const second = await startServe(t, dataDir, ['--demo'], env);
    streams.push(await openStream(second.port, '/api/v4/feeds/helio/http/stream', key));
    await gate.open(second.port);
    await eventually(async () => ((await sensor.health()).spool.records === 0 ? true : undefined), 90_000, 'the spool drained');
    await streams[1]!.records(500, 10_000);

    const ids = [...idsOf(streams[0]!), ...idsOf(streams[1]!)];
    const counts = new Map<number, number>();
    for (const id of ids) counts.set(id, (counts.get(id) ?? 0) + 1);
    const missing = Array.from({ length: TOTAL }, (_, i) => i).filter((i) => !counts.has(i));
    const twice = [...counts].filter(([, n]) => n > 1).map(([i]) => i);
    assert.deepEqual({ missing, twice, total: ids.length }, { missing: [], twice: [], total: TOTAL });
    // The second server got exactly the ones captured while it was down.
    assert.deepEqual(
      idsOf(streams[1]!).sort((a, b) => a - b),
      Array.from({ length: 500 }, (_, i) => 500 + i),
    );
    // The domain lookup counts each once too.
    const res = await fetch(`${second.origin}/api/v4/lookup/domain/${DOMAIN}`, { headers: { 'x-api-key': key } });
    assert.equal(((await res.json()) as { data: { stats: { total_events_30d: number } } }).data.stats.total_events_30d, TOTAL);
  });
});
