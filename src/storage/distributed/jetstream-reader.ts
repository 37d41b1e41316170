import {
  AckPolicy,
  DeliverPolicy,
  type Consumer,
  type ConsumerConfig,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { nanos } from '@nats-io/transport-node';
import { type NatsLink, NatsUnavailableError, natsFault } from './nats-connection.ts';

/** What the feed log and bus share on one connection. */
export interface JetStreamContext {
  js: JetStreamClient;
  jsm: JetStreamManager;
  link: NatsLink;
}

/** Where a reader begins: with what is published from now on, at a time, after a stream sequence, or at the first. */
export type ReadStart = { kind: 'new' } | { kind: 'time'; ms: number } | { kind: 'after'; seq: number } | { kind: 'all' };

export interface StreamReaderOptions {
  stream: string;
  start: ReadStart;
  /** Most messages one pull asks for: all that may wait in memory for a slow reader. */
  batch: number;
  /** How long one pull waits on the server for messages (ms, at least 1,000). */
  expiresMs: number;
  signal: AbortSignal;
}

/**
 * A consumer nobody pulls from is deleted by the server after this long (ms): what a node that
 * vanished, or a reader nobody iterates, leaves behind.
 */
const INACTIVE_MS = 60_000;

const consumerConfig = (start: ReadStart, filterSubject?: string): Partial<ConsumerConfig> => ({
  ack_policy: AckPolicy.None,
  // Readers keep their own position, so the consumer's state need not survive a server restart.
  mem_storage: true,
  num_replicas: 1,
  inactive_threshold: nanos(INACTIVE_MS),
  ...(filterSubject ? { filter_subject: filterSubject } : {}),
  ...(start.kind === 'new'
    ? { deliver_policy: DeliverPolicy.New }
    : start.kind === 'all'
      ? { deliver_policy: DeliverPolicy.All }
      : start.kind === 'time'
        ? { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(start.ms).toISOString() }
        : { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: start.seq + 1 }),
});

/**
 * Reads one stream in sequence order, every message once, through an ephemeral pull consumer. The
 * reader keeps the last stream sequence it handed out, and whenever anything goes wrong (NATS
 * restarted or reconnected, the consumer vanished, a delivery out of order) it recreates the consumer
 * right after that sequence: nothing is lost and nothing repeats, whatever NATS went through. Pulls
 * are paced by whoever iterates batches(): the next pull is asked for only once the last was taken.
 */
export class StreamReader {
  /** The last stream sequence handed out (before the first message: one less than the start). */
  cursor = 0;
  private consumer: Consumer | undefined;
  private consumerName: string | undefined;
  private delivered = 0;
  private fetching: ConsumerMessages | undefined;
  private stale = false;
  private ended = false;
  private wake: (() => void) | undefined;
  private readonly offReconnect: () => void;

  constructor(
    private readonly ctx: JetStreamContext,
    private readonly o: StreamReaderOptions,
  ) {
    // The pull in flight was lost with the old connection, and the consumer may be gone with a restarted server.
    this.offReconnect = ctx.link.onReconnect(() => {
      this.stale = true;
      this.fetching?.stop();
    });
    if (o.signal.aborted) this.end();
    else o.signal.addEventListener('abort', () => this.end(), { once: true });
  }

  /** Creates the consumer, so the start is fixed; rejects with NatsUnavailableError when NATS cannot be used. */
  async open(): Promise<void> {
    try {
      await this.create(this.o.start);
    } catch (e) {
      this.end();
      throw natsFault(e, `reading ${this.o.stream}`);
    }
  }

  /** Stops reading: batches() returns, and the consumer is deleted. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.offReconnect();
    this.fetching?.stop();
    this.wake?.();
    this.drop();
  }

  async *batches(): AsyncGenerator<JsMsg[]> {
    let failures = 0;
    try {
      while (!this.ended) {
        try {
          if (this.stale || !this.consumer) {
            this.drop();
            await this.ctx.link.whenUp(this.o.signal);
            if (this.ended) break;
            this.stale = false;
            await this.create({ kind: 'after', seq: this.cursor });
            if (!this.consumer) continue;
          }
          const iter = await this.consumer.fetch({ max_messages: this.o.batch, expires: this.o.expiresMs });
          this.fetching = iter;
          if (this.stale || this.ended) iter.stop();
          let out: JsMsg[] = [];
          try {
            for await (const m of iter) {
              if (m.info.deliverySequence !== ++this.delivered) {
                this.stale = true;
                break;
              }
              if (m.seq <= this.cursor) continue;
              this.cursor = m.seq;
              out.push(m);
              // Everything received so far goes out as one batch: one await per batch, not per message.
              if (iter.getPending() === 0) {
                yield out;
                out = [];
              }
            }
          } finally {
            this.fetching = undefined;
            iter.stop();
          }
          if (out.length > 0) yield out;
          failures = 0;
        } catch (e) {
          if (this.ended) break;
          const fault = natsFault(e, `reading ${this.o.stream}`);
          // A bug, or a connection its owner closed: nothing to wait for.
          if (!(fault instanceof NatsUnavailableError) || fault.code === 'NATS_CLOSED') throw fault;
          this.stale = true;
          await this.pause(Math.min(2_000, 100 * 2 ** failures++));
        }
      }
    } finally {
      this.end();
      this.drop();
    }
  }

  private async create(start: ReadStart): Promise<void> {
    const ci = await this.ctx.jsm.consumers.add(this.o.stream, consumerConfig(start));
    this.consumer = this.ctx.js.consumers.getConsumerFromInfo(ci);
    this.consumerName = ci.name;
    this.delivered = 0;
    // The server places a new consumer one before its first message: the start, fixed now.
    if (start.kind !== 'after') this.cursor = ci.delivered.stream_seq;
    // Ended while the consumer was being created: nobody will read it.
    if (this.ended) this.drop();
  }

  /** Forgets the consumer; the server is asked to delete it, and does so anyway once it sits idle. */
  private drop(): void {
    if (this.consumerName && this.ctx.link.up) this.ctx.jsm.consumers.delete(this.o.stream, this.consumerName).catch(() => {});
    this.consumer = undefined;
    this.consumerName = undefined;
  }

  private pause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wake = done;
    });
  }
}

/** How long a read of one subject may see no message while some are still due (ms). */
const READ_STALL_MS = 5_000;

/**
 * Every message of one subject that was in the stream when reading began, in order, as their
 * payloads in batches (a consumer filtered on the subject: the server sends them back to back).
 * Messages added meanwhile are not read; a part purged meanwhile ends the read early.
 */
export async function* readSubject(ctx: JetStreamContext, stream: string, subject: string, batch: number): AsyncGenerator<string[]> {
  let name: string | undefined;
  try {
    const ci = await ctx.jsm.consumers.add(stream, consumerConfig({ kind: 'all' }, subject));
    name = ci.name;
    const consumer = ctx.js.consumers.getConsumerFromInfo(ci);
    let left = ci.num_pending;
    let delivered = 0;
    while (left > 0) {
      const iter = await consumer.fetch({ max_messages: Math.min(batch, left), expires: 1_000 + READ_STALL_MS / 2 });
      // The client waits for a reconnect without a deadline; an export must fail instead of hanging.
      const stall = setTimeout(
        () => iter.stop(new NatsUnavailableError('NATS_TIMEOUT', `no message for ${READ_STALL_MS} ms`)),
        READ_STALL_MS,
      );
      let got = 0;
      let out: string[] = [];
      try {
        for await (const m of iter) {
          stall.refresh();
          if (m.info.deliverySequence !== ++delivered) throw new NatsUnavailableError('NATS_REFUSED', 'JetStream delivered out of order');
          out.push(m.string());
          got++;
          if (--left === 0) break;
          if (iter.getPending() === 0) {
            yield out;
            out = [];
          }
        }
      } finally {
        clearTimeout(stall);
        iter.stop();
      }
      if (out.length > 0) yield out;
      if (got === 0) break;
    }
  } catch (e) {
    throw natsFault(e, `reading ${subject}`);
  } finally {
    if (name) ctx.jsm.consumers.delete(stream, name).catch(() => {});
  }
}
