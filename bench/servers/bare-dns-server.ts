// The DNS bench's baseline: a UDP socket that answers every datagram NXDOMAIN by rewriting the
// query's header in place (QR and AA set, RD kept, rcode 3; the question echoed), parsing nothing and
// recording nothing: what node's dgram costs per query, with none of the listener's work.
// `node bare-dns-server.ts` prints {"port":N} once bound on 127.0.0.1.
import { createSocket } from 'node:dgram';

const udp = createSocket('udp4');
udp.on('message', (msg, rinfo) => {
  if (msg.length < 12) return;
  // The answer is the query's own bytes with the header's flags changed (an OPT record the query
  // carried would be echoed; the bench's dnsperf sends none).
  msg[2] = 0x84 | (msg[2]! & 0x01);
  msg[3] = 0x03;
  udp.send(msg, rinfo.port, rinfo.address);
});
udp.bind(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: udp.address().port })}\n`);
});
process.on('SIGTERM', () => udp.close(() => process.exit(0)));
