// Baselines for gRPC LookupIP under h2load: a server that answers every call with the same protobuf
// message, the very bytes umbra answered for the bench's request (no key, bucket, credits or dataset).
// `node fixed-grpc-server.ts grpc-js|http2 MESSAGE_FILE`:
//   grpc-js: @grpc/grpc-js with the method registered on raw buffers, so it costs what grpc-js itself
//            costs per call (framing, metadata, status), not a protobuf encoder;
//   http2:   bare node:http2 writing the gRPC frame and the grpc-status trailer: what the transport
//            underneath costs, the ceiling any gRPC server on node can reach.
// First stdout line: { grpcPort }.
import { readFileSync } from 'node:fs';
import { createServer, constants } from 'node:http2';
import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';

const mode = process.argv[2];
const message = readFileSync(process.argv[3]!);
const PATH = '/example.v1.ExampleService/LookupIP';
let grpcPort: number;

if (mode === 'grpc-js') {
  const server = new Server();
  const ok = server.register(
    PATH,
    (_call: ServerUnaryCall<Buffer, Buffer>, cb: sendUnaryData<Buffer>) => cb(null, message),
    (b: Buffer) => b,
    (b: Buffer) => b,
    'unary',
  );
  if (!ok) throw new Error(`could not register ${PATH}`);
  grpcPort = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
} else if (mode === 'http2') {
  // One length-prefixed frame, built once: flag 0 (not compressed), big-endian length, the message.
  const frame = Buffer.alloc(5 + message.length);
  frame.writeUInt32BE(message.length, 1);
  message.copy(frame, 5);
  const server = createServer();
  server.on('stream', (stream, headers) => {
    if (headers[constants.HTTP2_HEADER_PATH] !== PATH) {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '12' }, { endStream: true });
      return;
    }
    // The request body is read and dropped, as a server that decodes it would still have to read it.
    stream.on('data', () => undefined);
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(frame);
    });
    stream.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  grpcPort = (server.address() as { port: number }).port;
} else throw new Error(`mode ${mode}: grpc-js or http2`);

process.stdout.write(`${JSON.stringify({ grpcPort })}\n`);
process.on('SIGTERM', () => process.exit(0));
