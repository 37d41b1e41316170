import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';

/** The HAProxy configuration the repository ships (deploy/haproxy.cfg), a template. */
export const HAPROXY_TEMPLATE = join(import.meta.dirname, '../../deploy/haproxy.cfg');

export interface LbNode {
  name: string;
  host: string;
  httpPort: number;
  grpcPort: number;
}

export interface LbBinds {
  httpBind: string;
  grpcBind: string;
  statsSocket: string;
}

/**
 * The template rendered as its header says: each configuration line holding {{NODE_…}} once per
 * node, then the other placeholders. Throws when one is left, so a new placeholder cannot go untested.
 */
export function renderHaproxyConfig(template: string, binds: LbBinds, nodes: LbNode[]): string {
  const lines = template
    .split('\n')
    .flatMap((line) =>
      line.includes('{{NODE_') && !line.trimStart().startsWith('#')
        ? nodes.map((n) =>
            line
              .replaceAll('{{NODE_NAME}}', n.name)
              .replaceAll('{{NODE_HOST}}', n.host)
              .replaceAll('{{NODE_HTTP_PORT}}', String(n.httpPort))
              .replaceAll('{{NODE_GRPC_PORT}}', String(n.grpcPort)),
          )
        : [line],
    );
  const text = lines
    .join('\n')
    .replaceAll('{{HTTP_BIND}}', binds.httpBind)
    .replaceAll('{{GRPC_BIND}}', binds.grpcBind)
    .replaceAll('{{STATS_SOCKET}}', binds.statsSocket);
  const left = /\{\{[A-Z_]+\}\}/.exec(text);
  if (left) throw new Error(`deploy/haproxy.cfg: placeholder ${left[0]} is not rendered by the test`);
  return text;
}

/** The HAProxy binary: on PATH, or Debian's /usr/sbin (not on a plain user's PATH). Fails, never skips. */
export function haproxyBinary(): string {
  for (const bin of [process.env.UMBRA_TEST_HAPROXY, 'haproxy', '/usr/sbin/haproxy']) {
    if (bin && spawnSync(bin, ['-v'], { encoding: 'utf8' }).status === 0) return bin;
  }
  throw new Error('HAProxy is not installed (apt-get install haproxy; .ci/run installs it), or set UMBRA_TEST_HAPROXY to its path');
}

/** A port nothing listens on right now (the kernel's choice), for a child process to bind. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

export interface Haproxy {
  proc: ChildProcess;
  /** Its log (access lines and alerts), line by line. */
  output: string[];
  stop(): Promise<void>;
  /** `show servers state` of the runtime API: backend → server → up. */
  servers(): Promise<Map<string, Map<string, boolean>>>;
}

/** Checks the rendered file with `haproxy -c`, then runs HAProxy in the foreground on it. */
export async function startHaproxy(dir: string, config: string): Promise<Haproxy> {
  const bin = haproxyBinary();
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, config);
  const check = spawnSync(bin, ['-c', '-f', file], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`haproxy -c refused the configuration:\n${check.stdout}\n${check.stderr}`);
  const proc = spawn(bin, ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const collect = (chunk: Buffer) => output.push(...chunk.toString('utf8').split('\n').filter(Boolean));
  proc.stdout!.on('data', collect);
  proc.stderr!.on('data', collect);
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const socket = /stats socket (\S+)/.exec(readFileSync(file, 'utf8'))?.[1];
  if (!socket) throw new Error('the configuration has no stats socket');
  const servers = async () => {
    const text = await new Promise<string>((resolve, reject) => {
      const c = connect(socket);
      let out = '';
      c.on('data', (d) => (out += d.toString('utf8')));
      c.on('end', () => resolve(out));
      c.on('error', reject);
      c.end('show servers state\n');
    });
    const state = new Map<string, Map<string, boolean>>();
    for (const line of text.split('\n')) {
      // be_id be_name srv_id srv_name srv_addr srv_op_state …; op state 2 is running.
      const f = line.split(' ');
      if (f.length < 6 || line.startsWith('#') || !/^\d+$/.test(f[0]!)) continue;
      if (!state.has(f[1]!)) state.set(f[1]!, new Map());
      state.get(f[1]!)!.set(f[3]!, f[5] === '2');
    }
    return state;
  };
  return {
    proc,
    output,
    servers,
    stop: async () => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
      await exited;
    },
  };
}
