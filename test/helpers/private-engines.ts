import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * PostgreSQL, Redis and NATS servers of a test's own, on spare ports with their files in temp dirs, for
 * fault tests that stop, kill, pause and restart them: the machine's shared engines are never touched.
 *
 * Every server runs under `setpriv --pdeathsig KILL`, so it dies with the test process even when that
 * process is killed itself; what is left on a normal exit (a server, its temp dir) goes in an exit hook.
 * A server that cannot start throws with its name, the command and the end of its output: a fault test
 * whose engine is missing fails, it never skips.
 */

const SETPRIV = '/usr/bin/setpriv';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:port now. */
export const accepts = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Servers and dirs still there when the process exits (a test that threw before its cleanup ran).
const living = new Set<ChildProcess>();
const dirs = new Set<string>();
process.once('exit', () => {
  for (const c of living) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface ServerSpec {
  name: string;
  command: string;
  args: string[];
  port: number;
  /** Run as this user (PostgreSQL refuses to run as root). */
  user?: string;
  /** How long it may take to accept connections (ms). */
  startMs?: number;
}

/**
 * One engine process: started on its port (again and again, with the same files), stopped as an
 * orchestrator stops it, killed, or frozen (SIGSTOP: the socket stays open and nothing answers).
 */
class EngineProcess {
  private child: ChildProcess | undefined;
  private output: string[] = [];
  private paused = false;

  constructor(private readonly spec: ServerSpec) {}

  get port(): number {
    return this.spec.port;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Starts the server; resolves once it accepts connections. */
  async start(): Promise<void> {
    if (this.running) throw new Error(`${this.spec.name} is already running`);
    const { name, command, args, port, user } = this.spec;
    const asUser = user && process.getuid?.() === 0 ? [`--reuid=${user}`, `--regid=${user}`, '--init-groups'] : [];
    if (!existsSync(command)) throw new Error(`${name}: ${command} is not installed; fault tests need it (they never skip)`);
    const child = spawn(SETPRIV, ['--pdeathsig', 'KILL', ...asUser, '--', command, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    this.output = [];
    living.add(child);
    const keep = (b: Buffer) => {
      this.output.push(...b.toString().split('\n').filter(Boolean));
      if (this.output.length > 200) this.output.splice(0, this.output.length - 200);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    child.once('exit', () => living.delete(child));
    const deadline = Date.now() + (this.spec.startMs ?? 15_000);
    const exited = () => child.exitCode !== null || child.signalCode !== null;
    // Something else may hold the port (it was free when chosen): the server must be listening, and alive.
    while (!(await accepts(port)) || exited()) {
      if (exited()) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) before listening on ${port}: ${this.tail()}`);
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${name} did not listen on ${port} within ${this.spec.startMs ?? 15_000} ms: ${this.tail()}`);
      }
      await sleep(20);
    }
    await sleep(50);
    if (exited()) throw new Error(`${name} exited (${child.exitCode ?? child.signalCode}) right after starting on ${port}: ${this.tail()}`);
  }

  /** `signal` and wait until the process has exited. */
  async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    if (this.paused) this.resume();
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    // A server that does not finish its shutdown within 10 s is killed: a test must never wait forever.
    const overdue = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(overdue);
    // The kernel may keep the port a moment after the process is gone.
    while (await accepts(this.port)) await sleep(10);
  }

  /**
   * SIGSTOP: the server holds its connections open and answers nothing until resume(). Resolves once
   * every thread of it is stopped: a thread that was running when the signal came stops a moment later.
   */
  async pause(): Promise<void> {
    if (!this.running) throw new Error(`${this.spec.name} is not running`);
    const pid = this.child!.pid!;
    this.child!.kill('SIGSTOP');
    this.paused = true;
    const deadline = Date.now() + 5_000;
    while (!allStopped(pid)) {
      if (Date.now() > deadline) throw new Error(`${this.spec.name} (pid ${pid}) did not stop within 5 s`);
      await sleep(5);
    }
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.child?.kill('SIGCONT');
  }

  tail(): string {
    return this.output.slice(-15).join('\n');
  }
}

/** Whether every thread of a process is stopped (state T in /proc/PID/task/TID/stat). */
function allStopped(pid: number): boolean {
  try {
    return readdirSync(`/proc/${pid}/task`).every((tid) => {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'T';
    });
  } catch {
    return false;
  }
}

/** The processes whose parent is `pid` (a postmaster's backends and helpers). */
function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) out.push(Number(entry));
    } catch {
      // Ended meanwhile.
    }
  }
  return out;
}

/** A throw-away PostgreSQL cluster: initdb in a temp dir, trust authentication, one database `umbra`. */
export class PrivatePostgres {
  private backends: number[] = [];

  private constructor(
    private readonly proc: EngineProcess,
    private readonly dir: string,
  ) {}

  static async start(): Promise<PrivatePostgres> {
    const bin = postgresBin();
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'umbra-pg-'));
    dirs.add(dir);
    const data = join(dir, 'data');
    const sock = join(dir, 'sock');
    mkdirSync(sock);
    const asRoot = process.getuid?.() === 0;
    if (asRoot) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
      const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
      chownSync(dir, uid, gid);
      chownSync(sock, uid, gid);
    }
    const user = asRoot ? ['--reuid=postgres', '--regid=postgres', '--init-groups', '--'] : ['--'];
    try {
      execFileSync(
        SETPRIV,
        [...user, join(bin, 'initdb'), '-D', data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'],
        { stdio: 'pipe', cwd: dir },
      );
    } catch (e) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`initdb in ${bin} failed: ${(e as { stderr?: Buffer }).stderr?.toString() ?? (e as Error).message}`);
    }
    // A test cluster: no durability work, small memory, the log on stderr.
    writeFileSync(
      join(data, 'postgresql.auto.conf'),
      [
        "listen_addresses = '127.0.0.1'",
        `port = ${port}`,
        `unix_socket_directories = '${sock}'`,
        'fsync = off',
        'synchronous_commit = off',
        'full_page_writes = off',
        'shared_buffers = 16MB',
        'max_connections = 60',
        "log_min_messages = 'warning'",
        '',
      ].join('\n'),
    );
    if (asRoot) execFileSync('chown', ['postgres:postgres', join(data, 'postgresql.auto.conf')]);
    const pg = new PrivatePostgres(
      new EngineProcess({
        name: 'PostgreSQL',
        command: join(bin, 'postgres'),
        args: ['-D', data],
        port,
        user: 'postgres',
        startMs: 30_000,
      }),
      dir,
    );
    await pg.start();
    return pg;
  }

  get port(): number {
    return this.proc.port;
  }

  /** The URL of database `postgres` (umbra's tables go in a schema of the test's own). */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  get running(): boolean {
    return this.proc.running;
  }

  /** Starts the cluster (again); resolves once it takes connections. */
  async start(): Promise<void> {
    await this.proc.start();
    // Listening comes before the end of recovery after a kill: wait until a session can be opened.
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        execFileSync(join(postgresBin(), 'pg_isready'), ['-h', '127.0.0.1', '-p', String(this.port), '-t', '1'], { stdio: 'pipe' });
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`PostgreSQL on ${this.port} not ready within 30 s: ${this.proc.tail()}`);
        await sleep(50);
      }
    }
  }

  /** What `pg_ctl stop -m fast` does (SIGINT to the postmaster): sessions are ended, the server shuts down cleanly. */
  stop(): Promise<void> {
    return this.proc.signal('SIGINT');
  }

  /** SIGKILL of the postmaster: a crash; the next start recovers from the WAL. */
  kill(): Promise<void> {
    return this.proc.signal('SIGKILL');
  }

  /**
   * The whole server stops answering (a hung host, a partition): the postmaster and every backend of
   * an open session are stopped; connections stay open. Stopping the postmaster alone would only hang
   * new sessions.
   */
  async pause(): Promise<void> {
    await this.proc.pause();
    this.backends = childrenOf(this.proc.pid!);
    for (const pid of this.backends) process.kill(pid, 'SIGSTOP');
  }

  resume(): void {
    for (const pid of this.backends) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // Gone meanwhile.
      }
    }
    this.backends = [];
    this.proc.resume();
  }

  async destroy(): Promise<void> {
    this.resume();
    await this.proc.signal('SIGQUIT');
    rmSync(this.dir, { recursive: true, force: true });
    dirs.delete(this.dir);
  }
}

/** Where initdb, postgres and pg_isready are: UMBRA_TEST_PG_BIN, else the newest /usr/lib/postgresql/N/bin. */
function postgresBin(): string {
  if (process.env.UMBRA_TEST_PG_BIN) return process.env.UMBRA_TEST_PG_BIN;
  const root = '/usr/lib/postgresql';
  let versions: string[] = [];
  try {
    versions = execFileSync('ls', [root], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    // Not there: the error below says so.
  }
  const v = versions.sort((a, b) => Number(b) - Number(a)).find((x) => existsSync(join(root, x, 'bin', 'postgres')));
  if (!v)
    throw new Error(`no PostgreSQL server binaries under ${root}; set UMBRA_TEST_PG_BIN to the directory holding initdb and postgres`);
  return join(root, v, 'bin');
}

/** A Redis of the test's own: no persistence, so a restart starts empty, as a lost cache node does. */
export class PrivateRedis {
  private constructor(private readonly proc: EngineProcess) {}

  static async start(): Promise<PrivateRedis> {
    const port = await freePort();
    const command = process.env.UMBRA_TEST_REDIS_SERVER ?? '/usr/bin/redis-server';
    const r = new PrivateRedis(
      new EngineProcess({
        name: 'Redis',
        command,
        args: ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', tmpdir()],
        port,
      }),
    );
    await r.start();
    return r;
  }

  get port(): number {
    return this.proc.port;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  start(): Promise<void> {
    return this.proc.start();
  }

  kill(): Promise<void> {
    return this.proc.signal('SIGKILL');
  }

  pause(): Promise<void> {
    return this.proc.pause();
  }

  resume(): void {
    this.proc.resume();
  }

  destroy(): Promise<void> {
    return this.proc.signal('SIGKILL');
  }
}

/** A NATS server with JetStream of the test's own; its store dir outlives restarts (what was acknowledged stays). */
export class PrivateNats {
  private constructor(
    private readonly proc: EngineProcess,
    private readonly dir: string,
  ) {}

  static async start(): Promise<PrivateNats> {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'umbra-nats-'));
    dirs.add(dir);
    const command = process.env.UMBRA_TEST_NATS_SERVER ?? '/usr/sbin/nats-server';
    const n = new PrivateNats(
      new EngineProcess({ name: 'nats-server', command, args: ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir], port }),
      dir,
    );
    await n.start();
    return n;
  }

  get port(): number {
    return this.proc.port;
  }

  get url(): string {
    return `nats://127.0.0.1:${this.port}`;
  }

  get pid(): number | undefined {
    return this.proc.pid;
  }

  start(): Promise<void> {
    return this.proc.start();
  }

  /** SIGTERM, as an orchestrator stops it; waits until it has exited. */
  stop(): Promise<void> {
    return this.proc.signal('SIGTERM');
  }

  kill(): Promise<void> {
    return this.proc.signal('SIGKILL');
  }

  pause(): Promise<void> {
    return this.proc.pause();
  }

  resume(): void {
    this.proc.resume();
  }

  async destroy(): Promise<void> {
    await this.proc.signal('SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
    dirs.delete(this.dir);
  }
}
