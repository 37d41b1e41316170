import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from '../../../src/lib/logger.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';
import { grpcClient } from '../../helpers/grpc-client.ts';
import { rawConnect } from '../../helpers/raw-http.ts';

// The gRPC port: umbra's listener caps connections (UMBRA_GRPC_MAX_CONNECTIONS) and the gRPC server
// closes connections without calls (UMBRA_GRPC_IDLE_TIMEOUT_MS).

async function setup(t: TestContext, env: Record<string, string>) {
  const sockets: Socket[] = [];
  t.after(() => {
    for (const s of sockets) s.destroy();
  });
  const logs: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) logs.push(JSON.parse(line));
      done();
    },
  });
  const app = await buildTestApp(t, { logger: createLogger('warn', sink) }, env);
  const port = await app.grpc.listen('127.0.0.1', 0);
  const open = async () => {
    const socket = await rawConnect(port);
    sockets.push(socket);
    let closedAt: number | undefined;
    socket.on('error', () => {});
    socket.on('close', () => (closedAt = Date.now()));
    socket.resume();
    return { socket, closedAt: () => closedAt };
  };
  return { app, port, logs, open };
}

const metric = async (app: Awaited<ReturnType<typeof setup>>['app'], name: string) =>
  Number(new RegExp(`^${name} (\\S+)$`, 'm').exec((await app.http.inject({ url: '/metrics' })).body)?.[1]);

describe('the gRPC connection limit', () => {
  it('should close connections beyond UMBRA_GRPC_MAX_CONNECTIONS, count and log them, and serve again once one frees', async (t) => {
    const { app, port, logs, open } = await setup(t, { UMBRA_GRPC_MAX_CONNECTIONS: '3' });
    const { key } = await app.team();
    const held = [await open(), await open(), await open()];
    const extra = await open();
    await new Promise((r) => setTimeout(r, 100));
    assert.ok(extra.closedAt() !== undefined, 'the fourth connection is closed');
    assert.equal(
      held.some((h) => h.closedAt() !== undefined),
      false,
    );
    const client = grpcClient(port);
    const refused = await client.unary('GetAccountInfo', {}, key);
    client.close();
    assert.equal(refused.error?.code, status.UNAVAILABLE);
    assert.equal(await metric(app, 'umbra_grpc_connections_limit'), 3);
    assert.equal(await metric(app, 'umbra_grpc_connections'), 3);
    assert.ok((await metric(app, 'umbra_grpc_connections_refused_total')) >= 2);
    const warn = logs.find((l) => l.msg === 'connection limit reached' && l.transport === 'grpc');
    assert.ok(warn && (warn.refused as number) >= 1 && warn.limit === 3);

    held[0]!.socket.destroy();
    // The server counts the connection freed when its side closes: wait for that, not a fixed time.
    const freedBy = Date.now() + 2000;
    while ((await metric(app, 'umbra_grpc_connections')) >= 3 && Date.now() < freedBy) await new Promise((r) => setTimeout(r, 10));
    const again = grpcClient(port);
    t.after(() => again.close());
    const ok = await again.unary('GetAccountInfo', {}, key);
    assert.equal(ok.error, undefined);
  });

  it('should close a connection that makes no call within UMBRA_GRPC_IDLE_TIMEOUT_MS', async (t) => {
    const { open } = await setup(t, { UMBRA_GRPC_IDLE_TIMEOUT_MS: '300' });
    const started = Date.now();
    const silent = await open();
    const deadline = Date.now() + 5000;
    while (silent.closedAt() === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.ok(silent.closedAt() !== undefined, 'closed by the server');
    assert.ok(silent.closedAt()! - started >= 250, 'not before the idle timeout');
  });
});
