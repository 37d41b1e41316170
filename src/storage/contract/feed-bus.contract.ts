import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SlowConsumerError, type FeedBus, type FeedMessage } from '../../modules/feeds/feed-bus.ts';

const msg = (n: number): FeedMessage => ({ record: { timestamp: n, n }, line: `{"n":${n}}` });

async function take(it: AsyncIterable<readonly FeedMessage[]>, count: number): Promise<number[]> {
  const got: number[] = [];
  for await (const batch of it) {
    for (const m of batch) got.push(m.record.n as number);
    if (got.length >= count) break;
  }
  return got;
}

/** Behaviour every FeedBus backend must have. */
export function feedBusContract(backend: string, make: () => Promise<{ bus: FeedBus; close(): Promise<void> }>): void {
  describe(`FeedBus contract: ${backend}`, () => {
    it('should give every subscriber every message published after it subscribed, in order', async () => {
      const { bus, close } = await make();
      try {
        await bus.publish('proxies', [msg(0)]); // before anyone listens: nobody gets it
        const ac = new AbortController();
        const subs = Array.from({ length: 5 }, () => bus.subscribe('proxies', { signal: ac.signal, maxBuffered: 10_000 }));
        const other = bus.subscribe('torrents', { signal: ac.signal, maxBuffered: 10 });
        const results = subs.map((s) => take(s, 300));
        for (let i = 1; i <= 300; i += 3) await bus.publish('proxies', [msg(i), msg(i + 1), msg(i + 2)]);
        const expected = Array.from({ length: 300 }, (_, i) => i + 1);
        for (const r of await Promise.all(results)) assert.deepEqual(r, expected);
        ac.abort();
        const rest: unknown[] = [];
        for await (const b of other) rest.push(b);
        assert.deepEqual(rest, [], 'another feed gets nothing; abort ends the iteration');
      } finally {
        await close();
      }
    });

    it('should cut off a consumer that falls behind its buffer without slowing the others', async () => {
      const { bus, close } = await make();
      try {
        const ac = new AbortController();
        let overflowed = 0;
        const slow = bus.subscribe('ja4t', { signal: ac.signal, maxBuffered: 50, onOverflow: () => overflowed++ });
        const fast = bus.subscribe('ja4t', { signal: ac.signal, maxBuffered: 100_000 });
        const fastDone = take(fast, 1000);
        for (let i = 0; i < 1000; i += 10)
          await bus.publish(
            'ja4t',
            Array.from({ length: 10 }, (_, k) => msg(i + k)),
          );
        assert.equal((await fastDone).length, 1000);
        assert.equal(overflowed, 1);
        await assert.rejects(async () => {
          for await (const _ of slow) void _;
        }, SlowConsumerError);
        ac.abort();
      } finally {
        await close();
      }
    });

    it('should end an aborted subscription even while it waits', async () => {
      const { bus, close } = await make();
      try {
        const ac = new AbortController();
        const sub = bus.subscribe('anonymizers', { signal: ac.signal, maxBuffered: 10 });
        const done = take(sub, 1);
        setTimeout(() => ac.abort(), 10);
        assert.deepEqual(await done, []);
      } finally {
        await close();
      }
    });

    it('should report itself unhealthy and refuse subscriptions once closed', async () => {
      const { bus, close } = await make();
      try {
        assert.deepEqual(await bus.health(), []);
        const ac = new AbortController();
        const sub = bus.subscribe('proxies', { signal: ac.signal, maxBuffered: 10 });
        await bus.close();
        assert.notDeepEqual(await bus.health(), []);
        await assert.rejects(async () => {
          for await (const _ of sub) void _;
        });
        assert.throws(() => bus.subscribe('proxies', { signal: ac.signal, maxBuffered: 10 }));
      } finally {
        await close();
      }
    });
  });
}
