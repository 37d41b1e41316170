// Baseline for the sensor's TLS listener: a bare node:tls server with a self-signed EC P-256
// certificate (the key type the sensor makes), answering every connection's first request with the
// same bytes the sensor's decoy sends, then closing; it records nothing.
// `node bare-tls-server.ts ANSWER_BASE64`; prints {"port"} once listening, and on SIGUSR2 a line
// {"handshakes","resumed"} so the bench can tell full handshakes from resumed ones.
import { createServer } from 'node:tls';
import { generate } from 'selfsigned';

const answer = Buffer.from(process.argv[2] ?? '', 'base64');
const now = Date.now();
const pems = await generate([{ name: 'commonName', value: 'bench.example' }], {
  keyType: 'ec',
  curve: 'P-256',
  algorithm: 'sha256',
  notBeforeDate: new Date(now - 86_400_000),
  notAfterDate: new Date(now + 365 * 86_400_000),
});
let handshakes = 0;
let resumed = 0;
const server = createServer({ key: pems.private, cert: pems.cert, ALPNProtocols: ['http/1.1'] }, (socket) => {
  handshakes++;
  if (socket.isSessionReused()) resumed++;
  let head = '';
  socket.setEncoding('latin1');
  socket.on('data', (c: string) => {
    head += c;
    // One request per connection (the load asks Connection: close): answer at the end of its head.
    if (head.includes('\r\n\r\n')) socket.end(answer);
  });
  socket.on('error', () => socket.destroy());
});
server.on('tlsClientError', () => {});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as { port: number }).port })}\n`);
});
process.on('SIGUSR2', () => process.stdout.write(`${JSON.stringify({ handshakes, resumed })}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
