// Ceiling for the gRPC lookup bench: node:http2 alone answering every POST with the same gRPC frames
// grpc-js would send (headers, one length-prefixed LookupIP answer, grpc-status trailer), with no gRPC
// library at all: what the HTTP/2 layer itself costs per call.
import { createServer } from 'node:http2';
import type { ServiceDefinition } from '@grpc/grpc-js';
import { packageDefinition, SERVICE_NAME } from '../../src/proto.ts';

const answer = JSON.parse(process.argv[2]!);
const message = (packageDefinition()[SERVICE_NAME] as ServiceDefinition).LookupIP!.responseSerialize(answer);
const frame = Buffer.alloc(5 + message.length);
frame.writeUInt32BE(message.length, 1);
message.copy(frame, 5);
const server = createServer();
server.on('stream', (stream) => {
  stream.on('data', () => {});
  stream.on('end', () => {
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(frame);
  });
});
server.listen(0, '127.0.0.1', () => {
  const grpcPort = (server.address() as { port: number }).port;
  process.stdout.write(`${JSON.stringify({ port: 0, grpcPort, key: 'unused' })}\n`);
});
process.on('SIGTERM', () => process.exit(0));
