import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { BIN } from './umbra-cli.ts';

export interface SensorProcess {
  proc: ChildProcess;
  /** The bound port of each listener, by name. */
  ports: Record<string, number>;
  healthPort: number;
  stderr: string[];
  stdout: string[];
  exited: Promise<number | null>;
  health(): Promise<any>;
}

/**
 * Starts `umbra sensor --config <dir>/sensor.yaml` (the built CLI, as an operator runs it) and waits
 * until every listener and the health port said where they listen. Killed when the test ends.
 */
export async function startSensorProcess(
  t: TestContext,
  dir: string,
  config: Record<string, unknown>,
  env: Record<string, string> = {},
  args: string[] = [],
): Promise<SensorProcess> {
  const file = join(dir, 'sensor.yaml');
  // JSON is YAML: the file is read by the same YAML parser an operator's file is.
  writeFileSync(file, JSON.stringify(config, null, 2));
  const proc = spawn(process.execPath, [BIN, 'sensor', '--config', file, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  t.after(() => void proc.kill('SIGKILL'));
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  const stderr: string[] = [];
  const stdout: string[] = [];
  createInterface({ input: proc.stdout! }).on('line', (l) => stdout.push(l));
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sensor not ready within 30 s:\n${stderr.join('\n')}`)), 30_000);
    createInterface({ input: proc.stderr! }).on('line', (l) => {
      stderr.push(l);
      if (/^umbra sensor: health on /.test(l)) {
        clearTimeout(timer);
        resolve();
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`sensor exited (${code}):\n${stderr.join('\n')}`));
    });
  });
  await ready;
  const ports: Record<string, number> = {};
  for (const l of stderr) {
    const m = /^umbra sensor: (\S+) \(\w+\) listening on .*:(\d+), public port/.exec(l);
    if (m) ports[m[1]!] = Number(m[2]);
  }
  const healthPort = Number(/health on http:\/\/.*:(\d+)\/health/.exec(stderr.find((l) => l.includes('health on'))!)![1]);
  return {
    proc,
    ports,
    healthPort,
    stderr,
    stdout,
    exited,
    health: async () => (await fetch(`http://127.0.0.1:${healthPort}/health`)).json(),
  };
}

/** A port free right now (bound by the kernel, then released) for a server that must come back on it. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

/**
 * The path of a Debian tool the tests drive. A missing tool fails the test (never skips it): .ci/run
 * installs curl, openssl, bind9-dnsutils and adb when they are missing.
 */
export function requireTool(name: string): string {
  const r = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = r.stdout.trim();
  if (r.status !== 0 || !path) throw new Error(`${name} is not installed; .ci/run installs it (apt-get install ${name})`);
  return path;
}

/** Polls `check` every 50 ms until it returns a value or `ms` pass. */
export async function eventually<T>(check: () => Promise<T | undefined> | T | undefined, ms: number, what: string): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
