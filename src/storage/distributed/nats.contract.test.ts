import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { NatsConnection } from '@nats-io/transport-node';
import { dependencyFault } from '../../errors.ts';
import { HOUR_MS, hourOf } from '../../lib/time.ts';
import { BusUnavailableError, type FeedMessage } from '../../modules/feeds/feed-bus.ts';
import { FEED_IDS, FEEDS, type FeedId, recordTimeMs } from '../../modules/feeds/feed-catalog.ts';
import { LogLearner } from '../../modules/feeds/log-learner.ts';
import { testEngines, requireEngine, uniqueTestName } from '../../../test/helpers/engines.ts';
import { PrivateNats } from '../../../test/helpers/private-engines.ts';
import { feedBusContract } from '../contract/feed-bus.contract.ts';
import { feedLogContract } from '../contract/feed-log.contract.ts';
import { JetStreamFeedBus } from './jetstream-feed-bus.ts';
import { JetStreamFeedLog, type JetStreamFeedLogOptions } from './jetstream-feed-log.ts';
import { connectNats, NatsUnavailableError } from './nats-connection.ts';

before(() => requireEngine('NATS', testEngines.natsUrl));

/** Connections and streams a test opened; each instance has a prefix of its own and deletes its streams. */
async function openLog(options: JetStreamFeedLogOptions & { url?: string } = {}): Promise<{ nc: NatsConnection; log: JetStreamFeedLog }> {
  const prefix = options.prefix ?? uniqueTestName('umbra_t');
  const nc = await connectNats(options.url ?? testEngines.natsUrl, { name: `umbra test ${prefix}`, reconnectWaitMs: 100 });
  // JetStream API calls (creating streams, reading an hour) get 10 s, not the nodes' 2 s: on a loaded
  // CI machine file-backed stream creation has taken longer, and these tests are not about that deadline.
  return { nc, log: new JetStreamFeedLog(nc, { apiTimeoutMs: 10_000, ...options, prefix }) };
}

async function deleteStreams(log: JetStreamFeedLog): Promise<void> {
  const { jsm } = await log.context;
  // Deleting a stream of tens of thousands of messages right after a reconnect's resend has timed out
  // on a loaded CI machine (a cleanup step, after every assertion passed): the delete is asked again.
  const remove = async (name: string, attempts = 3): Promise<void> => {
    try {
      await jsm.streams.delete(name);
    } catch (e) {
      if (/stream not found/.test((e as Error).message)) return;
      if ((e as Error).name === 'TimeoutError' && attempts > 1) return remove(name, attempts - 1);
      throw e;
    }
  };
  await Promise.all(FEED_IDS.map((f) => remove(log.streamName(f))));
}

const toEntries = (feed: FeedId, messages: readonly FeedMessage[]) =>
  messages.map((m) => ({ timeMs: recordTimeMs(FEEDS[feed], m.record), line: m.line }));

feedLogContract('jetstream', async () => {
  const { nc, log } = await openLog();
  await log.ensureStreams();
  return {
    log,
    close: async () => {
      await log.close();
      await deleteStreams(log);
      await nc.close();
    },
  };
});

feedBusContract('jetstream', async () => {
  const { nc, log } = await openLog();
  await log.ensureStreams();
  const bus = new JetStreamFeedBus(log);
  return {
    bus,
    // The bus carries the log: what the log stores is what it delivers.
    publish: (feed, messages) => log.append(feed, toEntries(feed, messages)),
    close: async () => {
      await bus.close();
      await log.close();
      await deleteStreams(log);
      await nc.close();
    },
  };
});

const rec = (n: number, timestamp = Math.floor(Date.now() / 1000)) => ({
  timeMs: timestamp * 1000,
  line: JSON.stringify({ timestamp, n }),
});

/** Collects what an iterable delivers until aborted; `got` grows as batches arrive. */
function collect(it: AsyncIterable<readonly FeedMessage[]>): { got: number[]; done: Promise<unknown> } {
  const got: number[] = [];
  const done = (async () => {
    for await (const b of it) for (const m of b) got.push(m.record.n as number);
  })().catch((e: unknown) => e);
  return { got, done };
}

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('JetStream feed log and bus across nodes', () => {
  it('should deliver a record appended on one node to the live subscribers of every node, with one consumer per feed and node', async () => {
    const prefix = uniqueTestName('umbra_t');
    const [a, b, c] = await Promise.all([openLog({ prefix }), openLog({ prefix }), openLog({ prefix })]);
    const busA = new JetStreamFeedBus(a.log);
    const busB = new JetStreamFeedBus(b.log);
    try {
      // Several nodes starting at once create the same streams.
      await Promise.all([a.log.ensureStreams(), b.log.ensureStreams(), c.log.ensureStreams()]);
      const ac = new AbortController();
      const onA = await Promise.all([1, 2, 3].map(() => busA.subscribe('honeypot_dns', { signal: ac.signal, maxBuffered: 1_000 })));
      const onB = await busB.subscribe('honeypot_dns', { signal: ac.signal, maxBuffered: 1_000 });
      const { jsm } = await c.log.context;
      const stream = c.log.streamName('honeypot_dns');
      assert.equal((await jsm.streams.info(stream)).state.consumer_count, 2, 'one consumer per node, however many subscribers');
      const seen = [...onA, onB].map(collect);
      await c.log.append('honeypot_dns', [
        { timeMs: Date.now(), line: JSON.stringify({ timestamp: Date.now(), n: 1 }) },
        { timeMs: Date.now(), line: JSON.stringify({ timestamp: Date.now(), n: 2 }) },
      ]);
      await until('every subscriber of both nodes', () => seen.every((s) => s.got.length >= 2));
      for (const s of seen) assert.deepEqual(s.got, [1, 2]);
      ac.abort();
      await Promise.all(seen.map((s) => s.done));
      await until('the nodes to delete their consumers', async () => (await jsm.streams.info(stream)).state.consumer_count === 0);
    } finally {
      await Promise.all([busA.close(), busB.close()]);
      for (const n of [a, b, c]) await n.log.close();
      await deleteStreams(a.log);
      await Promise.all([a, b, c].map((n) => n.nc.close()));
    }
  });

  it('should replay exactly the records published after sinceMs, then go on live, each once, saying when it caught up', async () => {
    const { nc, log } = await openLog();
    const bus = new JetStreamFeedBus(log, { batch: 7 });
    try {
      await log.ensureStreams();
      await log.append('ja4t', [rec(1), rec(2), rec(3)]);
      await new Promise((r) => setTimeout(r, 30));
      const since = Date.now();
      await new Promise((r) => setTimeout(r, 30));
      // Spread over hours of record time: the replay goes by when records were appended, not by their hour.
      await log.append(
        'ja4t',
        Array.from({ length: 40 }, (_, i) => rec(10 + i, Math.floor(Date.now() / 1000) - (i % 5) * 3600)),
      );
      const ac = new AbortController();
      let caughtUpAt: number | undefined;
      let delivered = 0;
      const followed = await bus.follow('ja4t', since, { signal: ac.signal, onCaughtUp: () => (caughtUpAt = delivered) });
      const got: number[] = [];
      const done = (async () => {
        for await (const batch of followed) {
          assert.ok(batch.length <= 7, 'pulled in batches of at most the configured size');
          delivered += batch.length;
          for (const m of batch) got.push(m.record.n as number);
        }
      })();
      await until('the replay', () => got.length >= 40);
      await log.append('ja4t', [rec(100), rec(101)]);
      await until('the live records', () => got.length >= 42);
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(got, [...Array.from({ length: 40 }, (_, i) => 10 + i), 100, 101]);
      assert.ok(
        caughtUpAt !== undefined && caughtUpAt >= 33 && caughtUpAt <= 40,
        `caught up when the replay reached its end (${caughtUpAt})`,
      );
      ac.abort();
      await done;
    } finally {
      await bus.close();
      await log.close();
      await deleteStreams(log);
      await nc.close();
    }
  });

  it('should let a LogLearner on one node learn what another node appended, replayed then live, catching up first', async () => {
    const prefix = uniqueTestName('umbra_t');
    const [writer, reader] = await Promise.all([openLog({ prefix }), openLog({ prefix })]);
    const bus = new JetStreamFeedBus(reader.log);
    let learner: LogLearner | undefined;
    try {
      await writer.log.ensureStreams();
      await writer.log.append('proxies', [rec(1), rec(2)]);
      await writer.log.append('torrents', [rec(3)]);
      const got: Array<[FeedId, number]> = [];
      let replayed = -1;
      learner = new LogLearner({
        name: 'test state',
        log: reader.log,
        bus,
        feeds: [FEEDS.proxies, FEEDS.torrents, FEEDS.ja4t],
        windowMs: HOUR_MS,
        now: () => Date.now(),
        observer: (feed, batch) => {
          for (const m of batch) got.push([feed.id, m.record.n as number]);
        },
        onReplayed: (n) => (replayed = n),
      });
      await learner.start();
      await until('the learner to catch up', () => learner!.problems().length === 0);
      await writer.log.append('ja4t', [rec(4)]);
      await until('the live record', () => got.length >= 4);
      assert.deepEqual(
        got.sort((x, y) => x[1] - y[1]),
        [
          ['proxies', 1],
          ['proxies', 2],
          ['torrents', 3],
          ['ja4t', 4],
        ],
      );
      assert.ok(replayed >= 0, 'it said when the replay was done');
    } finally {
      await learner?.stop();
      await bus.close();
      for (const n of [writer, reader]) await n.log.close();
      await deleteStreams(writer.log);
      await Promise.all([writer.nc.close(), reader.nc.close()]);
    }
  });

  it('should pull a replay only as fast as the follower takes it', async () => {
    const { nc, log } = await openLog();
    const bus = new JetStreamFeedBus(log, { batch: 100 });
    try {
      await log.ensureStreams();
      for (let k = 0; k < 5; k++)
        await log.append(
          'honeypot_http',
          Array.from({ length: 1_000 }, (_, i) => rec(k * 1_000 + i)),
        );
      const ac = new AbortController();
      const it = (await bus.follow('honeypot_http', 0, { signal: ac.signal }))[Symbol.asyncIterator]();
      let taken = (await it.next()).value!.length;
      // The follower is busy with its first batch: nothing more may pile up than one pull.
      await new Promise((r) => setTimeout(r, 300));
      const { jsm } = await log.context;
      const [consumer] = await jsm.consumers.list(log.streamName('honeypot_http')).next();
      assert.ok(consumer!.delivered.stream_seq <= taken + 100, `${consumer!.delivered.stream_seq} sent for ${taken} taken`);
      while (taken < 5_000) taken += (await it.next()).value!.length;
      assert.equal(taken, 5_000);
      ac.abort();
      await it.return?.();
    } finally {
      await bus.close();
      await log.close();
      await deleteStreams(log);
      await nc.close();
    }
  });

  it('should say it caught up at once when there is nothing to replay, and end a follower when the bus closes', async () => {
    const { nc, log } = await openLog();
    const bus = new JetStreamFeedBus(log);
    try {
      await log.ensureStreams();
      await log.append('anonymizers', [rec(1)]);
      let caughtUp = 0;
      const ac = new AbortController();
      const later = await bus.follow('anonymizers', Date.now() + 1_000, { signal: ac.signal, onCaughtUp: () => caughtUp++ });
      await bus.follow('torrents', 0, { signal: ac.signal, onCaughtUp: () => caughtUp++ });
      assert.equal(caughtUp, 2, 'a replay that starts after the newest record, and an empty stream');
      const waiting = collect(later);
      await bus.close();
      assert.ok((await waiting.done) instanceof BusUnavailableError, 'closing the bus ends its followers with an error');
      ac.abort();
    } finally {
      await bus.close();
      await log.close();
      await deleteStreams(log);
      await nc.close();
    }
  });

  it('should refuse an append when its streams do not exist, as a dependency fault (503), and a record too large for NATS whole (413)', async () => {
    const { nc, log } = await openLog();
    try {
      const started = Date.now();
      const err = await log.append('proxies', [rec(1)]).then(
        () => assert.fail('appended without a stream'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof NatsUnavailableError, String(err));
      assert.equal(err.code, 'NATS_NO_RESPONDERS');
      assert.equal(dependencyFault(err)?.code, 'UNAVAILABLE');
      assert.ok(Date.now() - started < 2_500);

      await log.ensureStreams();
      const big = { timeMs: Date.now(), line: JSON.stringify({ timestamp: 1, pad: 'x'.repeat(nc.info!.max_payload) }) };
      await assert.rejects(log.append('proxies', [rec(2), big]), (e: Error & { code?: string }) => e.code === 'PAYLOAD_TOO_LARGE');
      assert.deepEqual(await log.hours('proxies'), [], 'nothing of the refused append was stored');
    } finally {
      await log.close();
      await deleteStreams(log);
      await nc.close();
    }
  });

  it('should store an append that straddles a reconnect once and in order: what was not acknowledged is sent again under the same id', async () => {
    const { nc, log } = await openLog();
    try {
      await log.ensureStreams();
      const hour = hourOf(Date.now());
      const count = 20_000;
      const acksBefore = nc.stats().inMsgs;
      const appended = log.append(
        'torrents',
        Array.from({ length: count }, (_, i) => ({ timeMs: hour, line: JSON.stringify({ timestamp: hour / 1000, n: i }) })),
      );
      // Part of the append is acknowledged, most of it is not, when the connection drops. Looked at
      // after every turn of the event loop, not on a timer: the acknowledgements' own I/O can hold a
      // timer back until all 20,000 are in (it did once, on a lightly loaded machine).
      const deadline = Date.now() + 5_000;
      while (nc.stats().inMsgs - acksBefore < 500) {
        if (Date.now() > deadline) throw new Error('timed out waiting for the first acknowledgements');
        await new Promise((r) => setImmediate(r));
      }
      const ackedAtDrop = nc.stats().inMsgs - acksBefore;
      await nc.reconnect();
      await appended;
      assert.ok(ackedAtDrop < count, `the reconnect came mid-append (${ackedAtDrop} of ${count} acknowledged)`);
      const stored: number[] = [];
      for await (const line of log.readHour('torrents', hour)) stored.push(JSON.parse(line).n as number);
      assert.equal(stored.length, count, 'each record stored once');
      assert.deepEqual(stored, [...Array(count).keys()], 'in append order');
    } finally {
      await log.close();
      await deleteStreams(log);
      await nc.close();
    }
  });

  it('should store a record once when it is appended again under the same id, from another connection (keyed ingestion)', async () => {
    const prefix = uniqueTestName('umbra_t');
    const a = await openLog({ prefix });
    const b = await openLog({ prefix });
    try {
      await a.log.ensureStreams();
      const hour = hourOf(Date.now());
      const entries = (from: number, to: number) =>
        Array.from({ length: to - from }, (_, i) => ({
          timeMs: hour,
          line: JSON.stringify({ n: from + i }),
          id: `key-digest.${from + i}`,
        }));
      await a.log.append('proxies', entries(0, 300));
      // A resend after a lost acknowledgement: the same ids, and some new ones, from another node.
      await b.log.append('proxies', entries(200, 500));
      const stored: number[] = [];
      for await (const line of a.log.readHour('proxies', hour)) stored.push(JSON.parse(line).n as number);
      assert.deepEqual(stored, [...Array(500).keys()], 'each id stored once, in order');
    } finally {
      await Promise.all([a.log.close(), b.log.close()]);
      await deleteStreams(a.log);
      await Promise.all([a.nc.close(), b.nc.close()]);
    }
  });

  it('should bring existing streams to a new retention, and keep their records', async () => {
    const prefix = uniqueTestName('umbra_t');
    const first = await openLog({ prefix });
    const second = await openLog({ prefix, maxAgeMs: 40 * 24 * HOUR_MS });
    try {
      await first.log.ensureStreams();
      await first.log.append('torrents', [rec(1)]);
      await second.log.ensureStreams();
      const { jsm } = await second.log.context;
      const info = await jsm.streams.info(second.log.streamName('torrents'));
      assert.equal(info.config.max_age, 40 * 24 * HOUR_MS * 1e6);
      assert.equal(info.state.messages, 1);
    } finally {
      await first.log.close();
      await second.log.close();
      await deleteStreams(first.log);
      await Promise.all([first.nc.close(), second.nc.close()]);
    }
  });
});

describe('JetStream feed log and bus through a NATS outage (private nats-server)', () => {
  let server: PrivateNats;
  before(async () => {
    server = await PrivateNats.start();
  });
  after(() => server.destroy());

  it('should report a hung NATS (the socket open, nothing answered) in its health within about a second, and clear it on resume', async () => {
    const { nc, log } = await openLog({ url: server.url });
    const bus = new JetStreamFeedBus(log, { pullExpiresMs: 2_000 });
    try {
      await log.ensureStreams();
      assert.deepEqual(await bus.health(), []);
      await server.pause();
      const started = performance.now();
      const problems = await bus.health();
      const ms = performance.now() - started;
      server.resume();
      assert.match(problems.join(), /^feed bus: NATS does not answer \(no reply to a ping within 1000 ms\)$/);
      assert.ok(ms < 1_500, `health answered in ${ms.toFixed(0)} ms`);
      await until('health to clear after the resume', async () => (await bus.health()).length === 0, 5_000);
    } finally {
      server.resume();
      await bus.close();
      await log.close();
      await nc.close();
    }
  });

  it('should fail appends fast while NATS is down, and afterwards deliver every acknowledged record once and keep them', async (t) => {
    const { nc, log } = await openLog({ url: server.url });
    const bus = new JetStreamFeedBus(log, { pullExpiresMs: 2_000 });
    const hour = hourOf(Date.now());
    const ac = new AbortController();
    let writing = true;
    let writer: Promise<void> | undefined;
    try {
      await log.ensureStreams();
      const follower = collect(await bus.follow('proxies', Date.now() - 60_000, { signal: ac.signal }));
      const live = collect(await bus.subscribe('proxies', { signal: ac.signal, maxBuffered: 1_000_000 }));

      const acked: number[] = [];
      const refused: number[] = [];
      const refusals: Array<{ ms: number; err: unknown }> = [];
      let lastAckAt = 0;
      let n = 0;
      writer = (async () => {
        while (writing) {
          const ids = Array.from({ length: 20 }, () => n++);
          const started = Date.now();
          try {
            await log.append(
              'proxies',
              ids.map((i) => ({ timeMs: hour + (i % 1000), line: JSON.stringify({ timestamp: Math.floor(hour / 1000), n: i }) })),
            );
            acked.push(...ids);
            lastAckAt = Date.now();
          } catch (err) {
            refused.push(...ids);
            refusals.push({ ms: Date.now() - started, err });
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      })();

      await until('appends before the outage', () => acked.length >= 200);
      await server.stop();
      await until('an append refused', () => refusals.length > 0, 5_000);
      // JetStream may refuse appends while the server shuts down, a moment before the connection drops.
      await until('the bus to say NATS is unreachable', async () => (await bus.health()).length > 0, 5_000);
      await assert.rejects(bus.subscribe('proxies', { signal: ac.signal, maxBuffered: 10 }), BusUnavailableError);
      await new Promise((r) => setTimeout(r, 3_000));
      const ackedBeforeRestart = acked.length;
      await server.start();
      const resumedAt = Date.now();
      await until('an append after the restart', () => lastAckAt > resumedAt, 15_000);
      const recoveredMs = lastAckAt - resumedAt;
      await until('appends after the restart', () => acked.length >= ackedBeforeRestart + 200, 15_000);
      writing = false;
      await writer;

      assert.ok(refusals.length >= 3, `appends were refused during the outage (${refusals.length})`);
      t.diagnostic(
        `${refusals.length} appends refused, in at most ${Math.max(...refusals.map((r) => r.ms))} ms; ` +
          `appends acknowledged again ${recoveredMs} ms after NATS listened; ${acked.length} records acknowledged in all`,
      );
      for (const r of refusals) {
        assert.ok(r.ms <= 2_500, `refused within 2.5 s (${r.ms} ms)`);
        assert.ok(r.err instanceof NatsUnavailableError, String(r.err));
        assert.equal(dependencyFault(r.err)?.code, 'UNAVAILABLE', 'answered 503');
      }
      const refusedSet = new Set(refused);
      const ackedSet = new Set(acked);
      for (const [name, s] of [
        ['follower', follower],
        ['live subscriber', live],
      ] as const) {
        await until(`the ${name} to receive every acknowledged record`, () => acked.every((i) => s.got.includes(i)));
        assert.equal(new Set(s.got).size, s.got.length, `the ${name} got no record twice`);
        assert.ok(
          s.got.every((i) => refusedSet.has(i) || ackedSet.has(i)),
          `the ${name} got only appended records`,
        );
      }
      assert.deepEqual(await bus.health(), []);

      const stored: number[] = [];
      for await (const line of log.readHour('proxies', hour)) stored.push(JSON.parse(line).n as number);
      assert.equal(new Set(stored).size, stored.length, 'no record stored twice');
      assert.ok(
        acked.every((i) => stored.includes(i)),
        'every acknowledged record survived the restart',
      );
      ac.abort();
      await Promise.all([follower.done, live.done]);
    } finally {
      writing = false;
      ac.abort();
      await writer;
      await bus.close();
      await log.close();
      await nc.close();
    }
  });
});
