// Baseline for the gRPC lookup bench: grpc-js serving the same .proto, answering LookupIP with a fixed
// result (no key check, no bucket, no credits, no dataset): what grpc-js itself costs per call.
import { Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';
import { packageDefinition, SERVICE_NAME } from '../../src/proto.ts';

const answer = JSON.parse(process.argv[2]!);
const server = new Server();
server.addService(packageDefinition()[SERVICE_NAME] as ServiceDefinition, {
  LookupIP: (_call: unknown, cb: (e: null, v: unknown) => void) => cb(null, answer),
});
const grpcPort = await new Promise<number>((resolve, reject) =>
  server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
);
process.stdout.write(`${JSON.stringify({ port: 0, grpcPort, key: 'unused' })}\n`);
process.on('SIGTERM', () => process.exit(0));
