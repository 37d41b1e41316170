import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import { ManualClock } from '../../lib/clock.ts';
import { MemoryFeedBus } from '../../storage/embedded/memory-feed-bus.ts';
import { MemoryStreamSlots } from '../../storage/embedded/memory-stream-slots.ts';
import type { Caller } from '../accounts/account-service.ts';
import { FEEDS } from './feed-catalog.ts';
import { pumpStream, type StreamSink } from './stream-pump.ts';
import { StreamService } from './stream-service.ts';
import type { StreamLease, StreamSlots } from './stream-slots.ts';

/** Short enough that renewals (every TTL / 3 of real time) come every 20 ms; expiry follows the manual clock. */
const TTL_MS = 60;

/** The embedded slots, with switches that make the backend fail (renew and release, or release alone) and a way to wait for the stream's next renew. */
class FlakySlots implements StreamSlots {
  readonly ttlMs = TTL_MS;
  failing = false;
  failRelease = false;
  renews = 0;
  private waiters: Array<(outcome: boolean | 'failed') => void> = [];

  constructor(readonly inner: MemoryStreamSlots) {}

  acquire(orgId: string, max: number) {
    return this.inner.acquire(orgId, max);
  }
  async renew(lease: StreamLease) {
    this.renews++;
    const outcome = this.failing ? 'failed' : await this.inner.renew(lease);
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(outcome);
    if (outcome === 'failed') throw new Error('Connection is closed.');
    return outcome;
  }
  release(lease: StreamLease) {
    return this.failing || this.failRelease ? Promise.reject(new Error('Connection is closed.')) : this.inner.release(lease);
  }
  count(orgId: string) {
    return this.inner.count(orgId);
  }

  /** The outcome of the stream's next renew, once the service has acted on it. */
  async nextRenew(): Promise<boolean | 'failed'> {
    const outcome = await new Promise<boolean | 'failed'>((resolve) => this.waiters.push(resolve));
    await tick();
    return outcome;
  }
}

const caller = (maxStreams: number) => ({ orgId: 'org_a', owner: { org: { maxStreams } } }) as unknown as Caller;

/** A sink that takes every batch at once and whose peer never leaves. */
const sink: StreamSink = { write: () => true, onPeerGone: () => () => {}, peerGone: () => false, once: () => {}, off: () => {} };

function setup() {
  const clock = new ManualClock();
  const slots = new FlakySlots(new MemoryStreamSlots({ ttlMs: TTL_MS, clock }));
  const bus = new MemoryFeedBus();
  const service = new StreamService(bus, slots, { maxBuffered: 100, clock });
  const closing = new AbortController();
  const pump = async () => {
    const stream = await service.open(caller(2), FEEDS.proxies, closing.signal);
    return { stream, ended: pumpStream(stream, sink, { lifetimeMs: 60_000, closing: closing.signal }) };
  };
  return { clock, slots, service, pump, close: () => bus.close() };
}

describe(StreamService.name, { timeout: 5_000 }, () => {
  it('should hold a slot lease while the stream is open, renew it past its first TTL, and release it on close', async () => {
    const { clock, slots, pump, close } = setup();
    const { stream, ended } = await pump();
    assert.equal(await slots.count('org_a'), 1);
    for (let i = 0; i < 5; i++) {
      // Almost a TTL between renewals, five times over: only the renewals keep the lease alive.
      clock.advance(TTL_MS - 1);
      assert.equal(await slots.nextRenew(), true);
    }
    assert.equal(await slots.count('org_a'), 1);
    assert.equal(stream.leaseLost.aborted, false);
    await stream.close();
    assert.equal(await ended, 'lifetime', 'closed by its owner, not by the lease');
    assert.equal(await slots.count('org_a'), 0, 'released at once, not when the lease lapses');
    const renews = slots.renews;
    await sleep(3 * (TTL_MS / 3));
    assert.equal(slots.renews, renews, 'no renewal after close');
    await close();
  });

  it('should end the stream as lease_lost when a renew finds the lease expired', async () => {
    const { clock, slots, pump, close } = setup();
    const { stream, ended } = await pump();
    // The event loop stalled for a TTL: the lease lapsed, and another stream may hold the slot now.
    clock.advance(TTL_MS);
    assert.ok(await slots.acquire('org_a', 1), 'the lapsed slot is free for another stream');
    assert.equal(await ended, 'lease_lost');
    assert.equal(stream.leaseLost.aborted, true);
    assert.equal(await slots.count('org_a'), 1, 'only the other stream counts');
    const renews = slots.renews;
    await sleep(3 * (TTL_MS / 3));
    assert.equal(slots.renews, renews, 'a lost lease is not renewed again');
    await close();
  });

  it('should ride out a failing backend while the lease can still be renewed in time, and end the stream before it lapses', async () => {
    const { clock, slots, pump, close } = setup();
    const { stream, ended } = await pump();
    slots.failing = true;
    assert.equal(await slots.nextRenew(), 'failed');
    clock.advance(TTL_MS / 2);
    assert.equal(await slots.nextRenew(), 'failed');
    assert.equal(stream.leaseLost.aborted, false, 'two failures, the lease still good for longer than a renewal period');
    slots.failing = false;
    assert.equal(await slots.nextRenew(), true, 'the backend is back: renewed');
    const renewedAt = clock.now();
    slots.failing = true;
    clock.advance(TTL_MS - TTL_MS / 3 - 1);
    assert.equal(await slots.nextRenew(), 'failed');
    assert.equal(stream.leaseLost.aborted, false, 'the next try still comes before the lease lapses');
    clock.set(renewedAt + TTL_MS - TTL_MS / 3);
    assert.equal(await slots.nextRenew(), 'failed');
    assert.equal(await ended, 'lease_lost', 'ended: the next try would come after the lease lapsed');
    assert.equal(await slots.inner.count('org_a'), 1, 'its slot is still held while the stream ends (the release failed too)');
    clock.set(renewedAt + TTL_MS);
    assert.equal(await slots.count('org_a'), 0, 'and it lapses by itself');
    await close();
  });

  it('should close without rejecting when the release fails, leaving the lease to lapse', async () => {
    const { clock, slots, pump, close } = setup();
    const { stream, ended } = await pump();
    slots.failRelease = true;
    await stream.close();
    assert.equal(await ended, 'lifetime');
    assert.equal(await slots.count('org_a'), 1);
    clock.advance(TTL_MS);
    assert.equal(await slots.count('org_a'), 0);
    await close();
  });
});
