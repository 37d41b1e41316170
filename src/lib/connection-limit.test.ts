import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { createLogger } from './logger.ts';
import { ConnectionLimiter, defaultConnectionLimits, softOpenFileLimit } from './connection-limit.ts';

class FakeSocket extends EventEmitter {
  bytesRead = 0;
  destroyed = false;
  busy = false;
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

function capture() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return { lines, logger: createLogger('warn', sink) };
}

const flush = () => new Promise((r) => setTimeout(r, 20));

describe(ConnectionLimiter.name, () => {
  it('should log at most one warn line per 10 s, with the counts of the whole window', async () => {
    let now = 0;
    const { lines, logger } = capture();
    let refused = 0;
    const limiter = new ConnectionLimiter({
      transport: 'http',
      max: 2,
      counters: { refused: () => refused++, reclaimed: () => {} },
      logger,
      now: () => now,
    });
    const admit = () => limiter.admit(new FakeSocket() as unknown as Socket);
    assert.deepEqual([admit(), admit(), admit()], [true, true, false]);
    now = 5_000;
    admit();
    admit();
    now = 10_001;
    admit();
    await flush();
    const warns = lines.filter((l) => l.msg === 'connection limit reached');
    assert.equal(refused, 4, 'every refusal is counted');
    assert.deepEqual(
      warns.map((w) => [w.refused, w.connections, w.limit]),
      [
        [1, 2, 2],
        [3, 2, 2],
      ],
    );
  });

  it('should reclaim only idle connections, those idle longest first, and never more than a batch', () => {
    const { logger } = capture();
    let now = 0;
    let reclaimed = 0;
    const limiter = new ConnectionLimiter({
      transport: 'http',
      max: 40,
      isIdle: (s) => !(s as unknown as FakeSocket).busy,
      counters: { refused: () => {}, reclaimed: (n) => (reclaimed += n) },
      logger,
      now: () => now,
    });
    const sockets = Array.from({ length: 40 }, (_, i) => {
      now = i;
      const s = new FakeSocket();
      limiter.admit(s as unknown as Socket);
      return s;
    });
    sockets[0]!.busy = true; // an answer in flight: never reclaimed
    sockets[1]!.bytesRead = 100; // a request since it connected: idle for the shortest time
    now = 1000;
    assert.equal(limiter.admit(new FakeSocket() as unknown as Socket), true);
    assert.equal(reclaimed, 2, 'a batch of 5% of the limit');
    assert.deepEqual(
      sockets.slice(0, 5).map((s) => s.destroyed),
      [false, false, true, true, false],
    );
    assert.equal(limiter.connections, 39);
  });
});

describe('default connection limits', () => {
  it('should read the soft open-file limit from /proc/self/limits', () => {
    const text =
      'Limit                     Soft Limit           Hard Limit           Units\nMax processes             unlimited            ' +
      'unlimited            processes\nMax open files            20000                40000                files\n';
    assert.equal(softOpenFileLimit(text), 20000);
    assert.equal(softOpenFileLimit(text.replace('20000', 'unlimited')), undefined);
    assert.equal(softOpenFileLimit(undefined), undefined);
  });

  it('should leave a reserve for files and split the rest between HTTP and gRPC', () => {
    assert.deepEqual(defaultConnectionLimits(1024), { http: 537, grpc: 184 });
    assert.deepEqual(defaultConnectionLimits(20_000), { http: 10_500, grpc: 3_600 });
    for (const fds of [1024, 4096, 20_000, 1_048_576]) {
      const { http, grpc } = defaultConnectionLimits(fds);
      // Each limiter may hold a few extra sockets while it refuses; files keep at least 256 more.
      const headroom = (n: number) => Math.min(256, Math.max(4, Math.ceil(n / 20)));
      assert.ok(http + grpc + headroom(http) + headroom(grpc) + 256 <= fds, String(fds));
    }
  });
});
