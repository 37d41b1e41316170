import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:http2';
import { createServer as createNetServer } from 'node:net';
import { credentials, loadPackageDefinition, Metadata, status, type ServiceDefinition, type ServiceError } from '@grpc/grpc-js';
import { loadProto, packageDefinition, SERVICE_NAME } from '../proto.ts';
import { type MethodDefinition, type StreamCall, type UnaryHandler, WireServer } from './wire-server.ts';

// The protocol parts of the lean server that umbra's handlers never exercise on their own: a grpc-js
// client (what customers use) must see the codes, texts and metadata grpc-js's server would send.

async function serve(t: TestContext, implementation: Record<string, unknown>, idleTimeoutMs = 60_000) {
  const server = new WireServer({
    maxReceiveMessageLength: 1024,
    idleTimeoutMs,
    keepaliveTimeMs: 120_000,
    keepaliveTimeoutMs: 20_000,
    maxConcurrentStreams: 100,
    maxSessionMemory: 64,
  });
  const definition = packageDefinition()[SERVICE_NAME] as ServiceDefinition;
  const handlers: Record<string, unknown> = Object.fromEntries(Object.keys(definition).map((k) => [k, implementation[k] ?? (() => {})]));
  server.addService(definition as unknown as Record<string, MethodDefinition>, handlers);
  const net = createNetServer((socket) => server.inject(socket));
  await new Promise<void>((r) => net.listen(0, '127.0.0.1', r));
  const port = (net.address() as { port: number }).port;
  const def = loadProto({ keepCase: true, longs: Number, enums: String, defaults: false });
  const Ctor = (loadPackageDefinition(def) as any).example.v1.ExampleService;
  const client = new Ctor(`127.0.0.1:${port}`, credentials.createInsecure());
  t.after(async () => {
    client.close();
    net.close();
    await server.close(100);
  });
  return { client, port };
}

const call = (client: any, method: string, req: object, md = new Metadata(), options: object = {}) =>
  new Promise<{ err: ServiceError | null; value: any; trailers: Metadata | undefined }>((resolve) => {
    let trailers: Metadata | undefined;
    const c = client[method](req, md, options, (err: ServiceError | null, value: unknown) =>
      setImmediate(() => resolve({ err, value, trailers: trailers ?? err?.metadata })),
    );
    c.on('status', (s: { metadata: Metadata }) => (trailers = s.metadata));
  });

describe('the gRPC wire server', () => {
  it('should answer a unary call with its message and trailing metadata, and pass the request metadata in', async (t) => {
    const lookup: UnaryHandler<{ ip_address: string }> = (c, cb) =>
      cb(null, { ip: `${c.request.ip_address}|${c.metadata.get('x-api-key')[0]}|${c.getPath()}` }, { 'x-credits-remaining': '41' });
    const { client } = await serve(t, { LookupIP: lookup });
    const md = new Metadata();
    md.set('x-api-key', 'k1');
    const r = await call(client, 'LookupIP', { ip_address: '8.8.8.8' }, md);
    assert.equal(r.err, null);
    assert.equal(r.value.ip, '8.8.8.8|k1|/example.v1.ExampleService/LookupIP');
    assert.equal(r.trailers?.get('x-credits-remaining')[0], '41');
  });

  it('should end a failed call with its code, the detail text (percent-encoded on the wire) and its metadata', async (t) => {
    const failing: UnaryHandler = (_c, cb) =>
      cb({ code: status.RESOURCE_EXHAUSTED, details: 'Rate limit 100% — wait', metadata: { 'retry-after': '3' } });
    const { client } = await serve(t, { LookupIP: failing });
    const r = await call(client, 'LookupIP', { ip_address: '1.1.1.1' });
    assert.equal(r.err?.code, status.RESOURCE_EXHAUSTED);
    assert.equal(r.err?.details, 'Rate limit 100% — wait');
    assert.equal(r.err?.metadata.get('retry-after')[0], '3');
  });

  it('should refuse an unknown method with UNIMPLEMENTED and a request over the size limit with RESOURCE_EXHAUSTED', async (t) => {
    let called = false;
    const { client } = await serve(t, {
      LookupIPs: ((_c, cb) => {
        called = true;
        cb(null, {});
      }) as UnaryHandler,
    });
    const unknown = await new Promise<ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        '/example.v1.ExampleService/Nope',
        (x: Buffer) => x,
        (x: Buffer) => x,
        Buffer.alloc(0),
        resolve,
      ),
    );
    assert.equal(unknown?.code, status.UNIMPLEMENTED);
    const big = await call(client, 'LookupIPs', { ips: Array.from({ length: 200 }, (_, i) => `10.0.0.${i}`) });
    assert.equal(big.err?.code, status.RESOURCE_EXHAUSTED);
    assert.equal(called, false);
  });

  it('should end a call that outlives its grpc-timeout with DEADLINE_EXCEEDED', async (t) => {
    const { client } = await serve(t, { LookupIP: (() => {}) as UnaryHandler });
    const r = await call(client, 'LookupIP', { ip_address: '1.1.1.1' }, new Metadata(), { deadline: Date.now() + 200 });
    assert.equal(r.err?.code, status.DEADLINE_EXCEEDED);
  });

  it('should stream messages with initial metadata, tell the handler when the client cancels, and answer 415 to non-gRPC requests', async (t) => {
    let cancelled: () => void = () => {};
    const gone = new Promise<void>((r) => (cancelled = r));
    const stream = (c: StreamCall) => {
      c.sendMetadata({ 'ratelimit-limit': '5' });
      c.write({ ip: 'first' });
      c.once('cancelled', () => {
        assert.equal(c.cancelled, true);
        cancelled();
      });
    };
    const { client, port } = await serve(t, { StreamProxies: stream });
    const s = client.StreamProxies({}, new Metadata());
    const headers = await new Promise<Metadata>((r) => s.once('metadata', r));
    assert.equal(headers.get('ratelimit-limit')[0], '5');
    await new Promise((r) => s.once('data', r));
    s.on('error', () => {});
    s.cancel();
    await gone;

    const h2 = connect(`http://127.0.0.1:${port}`);
    t.after(() => h2.close());
    const code = await new Promise((r) =>
      h2
        .request({ ':method': 'POST', ':path': '/', 'content-type': 'application/json' })
        .on('response', (h) => r(h[':status']))
        .end(),
    );
    assert.equal(code, 415);
  });
});
