import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { HOUR_MS } from '../../lib/time.ts';
import { FileFeedLog } from '../../storage/embedded/file-feed-log.ts';
import { MemoryFeedBus } from '../../storage/embedded/memory-feed-bus.ts';
import { SubscriptionQueue } from './subscription-queue.ts';
import type { FeedBus, FeedMessage, FollowOptions } from './feed-bus.ts';
import { FEEDS, type FeedDef, type FeedId } from './feed-catalog.ts';
import { LogLearner } from './log-learner.ts';

const NOW = Date.UTC(2026, 10, 25, 12, 30);
const msg = (n: number, timeMs = NOW): FeedMessage => {
  const record = { timestamp: Math.floor(timeMs / 1000), n };
  return { record, line: JSON.stringify(record) };
};
const seen = () => {
  const got: Array<[FeedId, number]> = [];
  return {
    got,
    observer: (feed: FeedDef, batch: readonly FeedMessage[]) => {
      for (const m of batch) got.push([feed.id, m.record.n as number]);
    },
  };
};
const settle = () => new Promise((r) => setImmediate(r));

describe('LogLearner with an in-process bus (embedded)', () => {
  it('should replay the window of the file log, then learn every record published live, each once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-learner-'));
    const log = new FileFeedLog(dir);
    const bus = new MemoryFeedBus();
    try {
      const old = msg(1, NOW - 3 * HOUR_MS);
      const recent = msg(2, NOW - HOUR_MS);
      for (const m of [old, recent]) await log.append('proxies', [{ timeMs: m.record.timestamp * 1000, line: m.line }]);
      const { got, observer } = seen();
      let replayed = -1;
      const learner = new LogLearner({
        name: 'test state',
        log,
        bus,
        feeds: [FEEDS.proxies, FEEDS.torrents],
        windowMs: 2 * HOUR_MS,
        now: () => NOW,
        observer,
        onReplayed: (n) => (replayed = n),
      });
      await learner.start();
      assert.equal(replayed, 1, 'only the record inside the window is replayed');
      assert.deepEqual(got, [['proxies', 2]]);
      await bus.publish('torrents', [msg(3), msg(4)]);
      await bus.publish('proxies', [msg(5)]);
      await bus.publish('ja4t', [msg(6)]); // not a feed this state learns
      await settle();
      assert.deepEqual(got, [
        ['proxies', 2],
        ['torrents', 3],
        ['torrents', 4],
        ['proxies', 5],
      ]);
      assert.deepEqual(learner.problems(), []);
      await learner.stop();
      await bus.publish('proxies', [msg(7)]);
      await settle();
      assert.equal(got.length, 4, 'a stopped learner learns nothing more');
    } finally {
      await bus.close();
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should pass over a batch its observer throws on and keep learning, and say when a feed is lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-learner-'));
    const log = new FileFeedLog(dir);
    const bus = new MemoryFeedBus();
    try {
      const got: number[] = [];
      const errors: string[] = [];
      const lost: string[] = [];
      const learner = new LogLearner({
        name: 'test state',
        log,
        bus,
        feeds: [FEEDS.proxies],
        windowMs: HOUR_MS,
        now: () => NOW,
        observer: (_f, batch) => {
          if (batch.some((m) => m.record.n === 2)) throw new Error('bad batch');
          for (const m of batch) got.push(m.record.n as number);
        },
        onObserverError: (_f, e) => errors.push(e.message),
        onLost: (f) => lost.push(f.id),
      });
      await learner.start();
      await bus.publish('proxies', [msg(1)]);
      await settle();
      await bus.publish('proxies', [msg(2)]);
      await settle();
      await bus.publish('proxies', [msg(3)]);
      await settle();
      assert.deepEqual(got, [1, 3]);
      assert.deepEqual(errors, ['bad batch']);
      await bus.close(); // the bus going away ends the subscription with an error
      await settle();
      assert.deepEqual(lost, ['proxies']);
      assert.match(learner.problems().join('\n'), /test state: no longer receives proxies records/);
      await learner.stop();
    } finally {
      await log.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** A bus that carries the log, kept in memory: enough to drive the learner's follow path. */
class RetainingBus implements FeedBus {
  readonly carriesLog = true;
  readonly kept = new Map<FeedId, FeedMessage[]>();
  private readonly followers: Array<{ feed: FeedId; queue: SubscriptionQueue }> = [];
  readonly caughtUp: Array<() => void> = [];

  async publish(feed: FeedId, messages: readonly FeedMessage[]): Promise<void> {
    this.kept.set(feed, [...(this.kept.get(feed) ?? []), ...messages]);
    for (const f of this.followers) if (f.feed === feed) f.queue.push(messages);
  }
  async subscribe(): Promise<AsyncIterable<readonly FeedMessage[]>> {
    throw new Error('not used by learners of a log-carrying bus');
  }
  async follow(feed: FeedId, sinceMs: number, options: FollowOptions): Promise<AsyncIterable<readonly FeedMessage[]>> {
    const queue = new SubscriptionQueue(Number.POSITIVE_INFINITY, undefined, () => {}, options.signal);
    queue.push((this.kept.get(feed) ?? []).filter((m) => m.record.timestamp * 1000 >= sinceMs));
    this.followers.push({ feed, queue });
    // The test says when the replay has caught up.
    if (options.onCaughtUp) this.caughtUp.push(options.onCaughtUp);
    return queue;
  }
  async health(): Promise<string[]> {
    return [];
  }
  async close(): Promise<void> {}
}

describe('LogLearner with a bus that carries the log (distributed)', () => {
  it('should follow each feed from the window start, start at once, and be catching up until every feed has caught up', async () => {
    const bus = new RetainingBus();
    await bus.publish('proxies', [msg(1, NOW - 3 * HOUR_MS), msg(2, NOW - HOUR_MS)]);
    const { got, observer } = seen();
    let replayedAt: number | undefined;
    const learner = new LogLearner({
      name: 'intelligence index',
      log: undefined as never, // a log-carrying bus is the log: the file log is never read
      bus,
      feeds: [FEEDS.proxies, FEEDS.torrents],
      windowMs: 2 * HOUR_MS,
      now: () => NOW,
      observer,
      onReplayed: (n) => (replayedAt = n),
    });
    await learner.start();
    await settle();
    assert.deepEqual(got, [['proxies', 2]]);
    assert.deepEqual(learner.problems(), ['intelligence index: catching up with the feed log (proxies, torrents)']);
    bus.caughtUp[0]!();
    assert.deepEqual(learner.problems(), ['intelligence index: catching up with the feed log (torrents)']);
    assert.equal(replayedAt, undefined);
    bus.caughtUp[1]!();
    assert.deepEqual(learner.problems(), []);
    assert.equal(replayedAt, 1);
    await bus.publish('torrents', [msg(3)]);
    await settle();
    assert.deepEqual(got, [
      ['proxies', 2],
      ['torrents', 3],
    ]);
    await learner.stop();
  });
});
