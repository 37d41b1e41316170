import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { BusUnavailableError, SlowConsumerError, type FeedBus, type FeedMessage } from '../../modules/feeds/feed-bus.ts';
import type { FeedId } from '../../modules/feeds/feed-catalog.ts';

const msg = (n: number): FeedMessage => ({ record: { timestamp: n, n }, line: `{"n":${n}}` });

async function take(it: AsyncIterable<readonly FeedMessage[]>, count: number): Promise<number[]> {
  const got: number[] = [];
  for await (const batch of it) {
    for (const m of batch) got.push(m.record.n as number);
    if (got.length >= count) break;
  }
  return got;
}

/**
 * What a contract instance needs: the bus, and how records reach it. A bus that carries the feed log
 * (`carriesLog`) gets them from the log's append, so its instance publishes through the paired log.
 */
export interface FeedBusUnderTest {
  bus: FeedBus;
  /** Default: bus.publish. */
  publish?(feed: FeedId, messages: readonly FeedMessage[]): Promise<void>;
  close(): Promise<void>;
}

/** Behaviour every FeedBus backend must have. */
export function feedBusContract(backend: string, make: () => Promise<FeedBusUnderTest>): void {
  const open = async () => {
    const t = await make();
    return { ...t, publish: t.publish ?? ((feed: FeedId, m: readonly FeedMessage[]) => t.bus.publish(feed, m)) };
  };
  describe(`FeedBus contract: ${backend}`, () => {
    it('should give every subscriber every message published after it subscribed, in order', async () => {
      const { bus, publish, close } = await open();
      try {
        await publish('proxies', [msg(0)]); // before anyone listens: nobody gets it
        const ac = new AbortController();
        const subs = await Promise.all(
          Array.from({ length: 5 }, () => bus.subscribe('proxies', { signal: ac.signal, maxBuffered: 10_000 })),
        );
        const other = await bus.subscribe('torrents', { signal: ac.signal, maxBuffered: 10 });
        const results = subs.map((s) => take(s, 300));
        for (let i = 1; i <= 300; i += 3) await publish('proxies', [msg(i), msg(i + 1), msg(i + 2)]);
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
      const { bus, publish, close } = await open();
      try {
        const ac = new AbortController();
        let overflowed = 0;
        const slow = await bus.subscribe('ja4t', { signal: ac.signal, maxBuffered: 50, onOverflow: () => overflowed++ });
        const fast = await bus.subscribe('ja4t', { signal: ac.signal, maxBuffered: 100_000 });
        const fastDone = take(fast, 1000);
        for (let i = 0; i < 1000; i += 10)
          await publish(
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
      const { bus, close } = await open();
      try {
        const ac = new AbortController();
        const sub = await bus.subscribe('anonymizers', { signal: ac.signal, maxBuffered: 10 });
        const done = take(sub, 1);
        setTimeout(() => ac.abort(), 10);
        assert.deepEqual(await done, []);
      } finally {
        await close();
      }
    });

    it('should report itself unhealthy and refuse subscriptions once closed', async () => {
      const { bus, close } = await open();
      try {
        assert.deepEqual(await bus.health(), []);
        const ac = new AbortController();
        const sub = await bus.subscribe('proxies', { signal: ac.signal, maxBuffered: 10 });
        await bus.close();
        assert.notDeepEqual(await bus.health(), []);
        await assert.rejects(async () => {
          for await (const _ of sub) void _;
        });
        await assert.rejects(bus.subscribe('proxies', { signal: ac.signal, maxBuffered: 10 }), BusUnavailableError);
      } finally {
        await close();
      }
    });

    it('should replay what it carries from a time on, then go on live, each record once (only a bus that carries the log)', async () => {
      const { bus, publish, close } = await open();
      try {
        if (!bus.carriesLog) {
          // An in-process bus keeps nothing to replay: learners replay the file log instead.
          assert.equal(bus.follow, undefined, 'only a bus that carries the log can replay');
          return;
        }
        assert.ok(bus.follow);
        const since = Date.now();
        await publish('torrents', [msg(1), msg(2)]);
        const ac = new AbortController();
        let caughtUp = false;
        const followed = await bus.follow('torrents', since - 1_000, { signal: ac.signal, onCaughtUp: () => (caughtUp = true) });
        const got = take(followed, 5);
        await publish('torrents', [msg(3), msg(4), msg(5)]);
        assert.deepEqual(await got, [1, 2, 3, 4, 5]);
        assert.equal(caughtUp, true);
        ac.abort();
      } finally {
        await close();
      }
    });
  });
}
