import { connect, createServer, type Server, type Socket } from 'node:net';

export type GateMode =
  /** Connections are relayed both ways. */
  | 'open'
  /** Requests reach the server, but each connection is cut when the answer starts: the client never
   * learns that its request was served (a lost acknowledgement). */
  | 'drop-answers';

/**
 * A TCP relay the test puts between a client and a server, on a port that stays the same while the
 * server behind it is restarted (on another port), closed (connections refused) or made to lose answers.
 */
export class TcpGate {
  mode: GateMode = 'open';
  target = 0;
  /** Connections whose answer was cut in drop-answers mode. */
  dropped = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  constructor(readonly port: number) {}

  async open(target: number, mode: GateMode = 'open'): Promise<void> {
    this.target = target;
    this.mode = mode;
    if (this.server) return;
    const server = createServer((client) => this.relay(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.server = server;
  }

  /** Stops listening and cuts every relayed connection: clients get connection refused. */
  async close(): Promise<void> {
    const s = this.server;
    this.server = undefined;
    for (const c of this.sockets) c.destroy();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }

  private relay(client: Socket): void {
    const upstream = connect(this.target, '127.0.0.1');
    this.sockets.add(client).add(upstream);
    const gone = () => {
      this.sockets.delete(client);
      this.sockets.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', gone).on('close', gone);
    upstream.on('error', gone).on('close', gone);
    client.pipe(upstream);
    // The mode is looked at per answer, so a kept-alive connection opened earlier loses its answers too.
    upstream.on('data', (chunk: Buffer) => {
      if (this.mode === 'drop-answers') {
        this.dropped++;
        gone();
      } else if (!client.write(chunk)) {
        upstream.pause();
        client.once('drain', () => upstream.resume());
      }
    });
    upstream.on('end', () => client.end());
  }
}
