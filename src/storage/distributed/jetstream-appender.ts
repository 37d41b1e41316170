import { createInbox, headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { type NatsLink, NatsUnavailableError, natsFault } from './nats-connection.ts';

export interface AppendItem {
  subject: string;
  data: string;
  /** Nats-Msg-Id to store it under (keyed ingestion), instead of the per-send reply subject. */
  id?: string;
}

interface InFlight {
  items: readonly AppendItem[];
  acked: Uint8Array;
  left: number;
  timer: NodeJS.Timeout;
  resolve: () => void;
  reject: (e: Error) => void;
}

/**
 * Publishes a group of messages to JetStream and resolves once the stream acknowledged every one.
 *
 * All messages go out at once with a reply subject of this appender's inbox (`<inbox>.<group>.<index>`)
 * and one deadline per group, renewed by every acknowledgement: a request per message (js.publish)
 * costs a timer, a promise and a subscription entry each, four times the CPU, and JetStream has no
 * batch publish before server 2.12. The reply subject is also the message's Nats-Msg-Id, so when the
 * connection comes back mid-group the unacknowledged messages are sent again and any the stream
 * already stored are dropped as duplicates: a group that straddles a reconnect is stored once.
 */
export class JetStreamAppender {
  private readonly inbox = createInbox();
  private readonly inFlight = new Map<number, InFlight>();
  private readonly sub: Subscription;
  private readonly offReconnect: () => void;
  private nextGroup = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly link: NatsLink,
    /** A group fails when this long (ms) passes without an acknowledgement. */
    private readonly ackTimeoutMs: number,
  ) {
    this.sub = nc.subscribe(`${this.inbox}.>`, { callback: (err, m) => (err ? this.failAll(err) : this.onAck(m)) });
    this.offReconnect = link.onReconnect(() => {
      for (const [group, f] of this.inFlight) this.send(group, f, true);
    });
  }

  publish(items: readonly AppendItem[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    // Refused at once: while the client reconnects it would only hold the messages until the deadline.
    const problem = this.link.problem();
    if (problem) return Promise.reject(new NatsUnavailableError(this.nc.isClosed() ? 'NATS_CLOSED' : 'NATS_DISCONNECTED', problem));
    const group = this.nextGroup++;
    return new Promise<void>((resolve, reject) => {
      const f: InFlight = {
        items,
        acked: new Uint8Array(items.length),
        left: items.length,
        timer: setTimeout(() => {
          const done = items.length - f.left;
          this.settle(
            group,
            new NatsUnavailableError(
              'NATS_TIMEOUT',
              `JetStream acknowledged ${done} of ${items.length} records, then nothing for ${this.ackTimeoutMs} ms`,
            ),
          );
        }, this.ackTimeoutMs),
        resolve,
        reject,
      };
      this.inFlight.set(group, f);
      this.send(group, f, false);
    });
  }

  private send(group: number, f: InFlight, again: boolean): void {
    try {
      for (let i = 0; i < f.items.length; i++) {
        if (f.acked[i]) continue;
        const reply = `${this.inbox}.${group}.${i}`;
        const h = headers();
        // A client's idempotent id also dedupes a resend from another request, process or node.
        h.set('Nats-Msg-Id', f.items[i]!.id ?? reply);
        this.nc.publish(f.items[i]!.subject, f.items[i]!.data, { reply, headers: h });
      }
      if (again) f.timer.refresh();
    } catch (e) {
      const err = natsFault(e, 'appending to the feed log');
      this.settle(group, err instanceof Error ? err : new Error(String(err)));
    }
  }

  private onAck(m: Msg): void {
    const s = m.subject;
    const dot = s.lastIndexOf('.');
    const group = Number(s.slice(s.lastIndexOf('.', dot - 1) + 1, dot));
    const i = Number(s.slice(dot + 1));
    const f = this.inFlight.get(group);
    if (!f || f.acked[i]) return;
    // No stream listens on the subject (it was not created, or JetStream is still starting).
    if (m.headers?.hasError || m.data.length === 0) {
      const why = m.headers?.description || 'no responders';
      this.settle(
        group,
        new NatsUnavailableError('NATS_NO_RESPONDERS', `JetStream did not take a record (${m.headers?.code ?? 503} ${why})`),
      );
      return;
    }
    const ack = JSON.parse(m.string()) as { error?: { code: number; description: string } };
    if (ack.error) {
      this.settle(
        group,
        new NatsUnavailableError('NATS_REFUSED', `JetStream refused a record (${ack.error.code} ${ack.error.description})`),
      );
      return;
    }
    f.acked[i] = 1;
    f.timer.refresh();
    if (--f.left === 0) this.settle(group);
  }

  private settle(group: number, err?: Error): void {
    const f = this.inFlight.get(group);
    if (!f) return;
    this.inFlight.delete(group);
    clearTimeout(f.timer);
    if (err) f.reject(err);
    else f.resolve();
  }

  private failAll(err: Error): void {
    const e = natsFault(err, 'receiving acknowledgements');
    for (const group of [...this.inFlight.keys()]) this.settle(group, e instanceof Error ? e : err);
  }

  /** Waits for the groups in flight to settle (each within its deadline), then stops listening. */
  async close(): Promise<void> {
    while (this.inFlight.size > 0) await new Promise((r) => setTimeout(r, 5));
    this.offReconnect();
    if (!this.nc.isClosed()) this.sub.unsubscribe();
  }
}
