// Baseline for the sensor's ADB listener: a bare TCP server speaking the few bytes a scanner's
// `adb shell <command>` needs (the device's CNXN banner, OKAY, the command's answer, CLSE), with the
// same codec and answers as the sensor, recording nothing. Prints {"port"} once listening.
import { createServer } from 'node:net';
import {
  A_CLSE,
  A_CNXN,
  A_OKAY,
  A_OPEN,
  A_VERSION,
  A_WRTE,
  DEVICE_BANNER,
  encodeAdb,
  MAX_PAYLOAD,
  readAdb,
} from '../../src/modules/sensor/adb-protocol.ts';
import { fakeShell } from '../../src/modules/sensor/adb-shell.ts';

const banner = encodeAdb(A_CNXN, A_VERSION, MAX_PAYLOAD, Buffer.from(DEVICE_BANNER));
const server = createServer({ noDelay: true }, (socket) => {
  let buf: Buffer = Buffer.alloc(0);
  socket.on('data', (c: Buffer) => {
    buf = buf.length ? Buffer.concat([buf, c]) : c;
    for (;;) {
      const r = readAdb(buf);
      if (r.kind === 'bad') return socket.destroy();
      if (r.kind === 'more') return;
      buf = buf.subarray(r.used);
      const m = r.message;
      if (m.command === A_CNXN) socket.write(banner);
      else if (m.command === A_OPEN) {
        const service = m.data.toString('utf8').replace(/\0$/, '');
        const command = service.startsWith('shell:') ? service.slice(6) : '';
        socket.write(
          Buffer.concat([
            encodeAdb(A_OKAY, 1, m.arg0),
            encodeAdb(A_WRTE, 1, m.arg0, Buffer.from(fakeShell(command))),
            encodeAdb(A_CLSE, 1, m.arg0),
          ]),
        );
      }
    }
  });
  socket.on('error', () => socket.destroy());
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
