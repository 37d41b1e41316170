// Load for the ADB listener: `node adb-load.ts PORT SECONDS CONNECTIONS` keeps CONNECTIONS sessions
// going at once for SECONDS, each a new TCP connection that does what a scanner's `adb shell` does:
// CNXN, then OPEN shell:<command>, reads the answer until the device closes the stream, then closes.
// Prints {"sessions","errors","seconds"}. JavaScript, in a process of its own: no C load generator
// speaks ADB.
import { connect } from 'node:net';
import { A_CLSE, A_CNXN, A_OPEN, A_VERSION, encodeAdb, MAX_PAYLOAD, readAdb } from '../../src/modules/sensor/adb-protocol.ts';

const [port, seconds, connections] = process.argv.slice(2).map(Number) as [number, number, number];
const hello = encodeAdb(A_CNXN, A_VERSION, MAX_PAYLOAD, Buffer.from('host::features=shell_v2,cmd\0'));
const until = Date.now() + seconds * 1000;
const t0 = process.hrtime.bigint();
let sessions = 0;
let errors = 0;
let serial = 0;

function session(): Promise<void> {
  return new Promise((resolve) => {
    const s = connect({ port, host: '127.0.0.1', noDelay: true });
    let buf: Buffer = Buffer.alloc(0);
    let stage: 'cnxn' | 'shell' = 'cnxn';
    let finished = false;
    const done = (ok: boolean) => {
      if (finished) return;
      finished = true;
      if (ok) sessions++;
      else errors++;
      s.destroy();
      resolve();
    };
    s.on('connect', () => s.write(hello));
    s.on('data', (c: Buffer) => {
      buf = buf.length ? Buffer.concat([buf, c]) : c;
      for (;;) {
        const r = readAdb(buf);
        if (r.kind === 'bad') return done(false);
        if (r.kind === 'more') return;
        buf = buf.subarray(r.used);
        if (stage === 'cnxn' && r.message.command === A_CNXN) {
          stage = 'shell';
          s.write(encodeAdb(A_OPEN, 1, 0, Buffer.from(`shell:echo probe-${++serial}\0`)));
        } else if (stage === 'shell' && r.message.command === A_CLSE) return done(true);
      }
    });
    s.on('error', () => done(false));
    s.on('close', () => done(false));
  });
}

await Promise.all(
  Array.from({ length: connections }, async () => {
    while (Date.now() < until) await session();
  }),
);
const elapsed = Number(process.hrtime.bigint() - t0) / 1e9;
process.stdout.write(`${JSON.stringify({ sessions, errors, seconds: elapsed })}\n`);
