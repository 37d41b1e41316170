import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const NATS_SERVER = process.env.UMBRA_TEST_NATS_SERVER ?? '/usr/sbin/nats-server';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const accepts = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

/**
 * A NATS server with JetStream of a test's own, on a spare port with its store in a temp dir, for
 * fault tests: it can be stopped and started again (same port, same store) without touching the
 * shared engine.
 */
export class PrivateNatsServer {
  private child: ChildProcess | undefined;

  private constructor(
    readonly port: number,
    private readonly dir: string,
  ) {}

  static async start(): Promise<PrivateNatsServer> {
    const server = new PrivateNatsServer(await freePort(), mkdtempSync(join(tmpdir(), 'umbra-nats-')));
    await server.resume();
    return server;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  /** Starts the server again on its port and store; resolves once it accepts connections. */
  async resume(): Promise<void> {
    const child = spawn(NATS_SERVER, ['-js', '-a', '127.0.0.1', '-p', String(this.port), '-sd', this.dir], { stdio: 'ignore' });
    this.child = child;
    const deadline = Date.now() + 10_000;
    while (!(await accepts(this.port))) {
      if (child.exitCode !== null) throw new Error(`nats-server exited with ${child.exitCode} on port ${this.port}`);
      if (Date.now() > deadline) throw new Error(`nats-server did not listen on ${this.port} within 10 s`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Stops the server as an orchestrator would (SIGTERM) and waits until it has exited. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }

  async destroy(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
