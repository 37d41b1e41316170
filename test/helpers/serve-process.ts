import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { TestContext } from 'node:test';
import { BIN } from './umbra-cli.ts';

export interface ServeProcess {
  proc: ChildProcess;
  /** `http://127.0.0.1:PORT` (no API prefix). */
  origin: string;
  port: number;
  /** Everything the server wrote to stderr so far, line by line (its pino log goes to stdout). */
  stderr: string[];
  /** Its stdout (JSON log lines) so far. */
  stdout: string[];
  exited: Promise<number | null>;
  /** Resolves with the first stderr line that matches, waiting for it if needed. */
  line(re: RegExp, ms?: number): Promise<RegExpExecArray>;
}

/**
 * Starts `umbra serve` on a data dir (ports chosen by the kernel unless args say otherwise) and waits
 * for it to say where it serves. Killed when the test ends.
 */
export async function startServe(
  t: TestContext,
  dataDir: string,
  args: string[] = [],
  env: Record<string, string> = {},
  /** How long to wait for it to serve (a demo start backfills 48 hours of records first). */
  startMs = 60_000,
): Promise<ServeProcess> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--http-port', '0', '--grpc-port', '0', '--data-dir', dataDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, UMBRA_LOG_LEVEL: 'warn', UMBRA_SIMULATOR_RATE: '0', UMBRA_EXPORT_JOBS: 'off', ...env },
  });
  const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
  t.after(() => void proc.kill('SIGKILL'));
  const stderr: string[] = [];
  const stdout: string[] = [];
  const waiters: Array<() => void> = [];
  createInterface({ input: proc.stderr! }).on('line', (l) => {
    stderr.push(l);
    for (const w of waiters.splice(0)) w();
  });
  createInterface({ input: proc.stdout! }).on('line', (l) => stdout.push(l));
  const line = (re: RegExp, ms = 60_000) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no line ${re} within ${ms} ms:\n${stderr.join('\n')}`)), ms);
      const check = () => {
        for (const l of stderr) {
          const m = re.exec(l);
          if (m) {
            clearTimeout(timer);
            return resolve(m);
          }
        }
        waiters.push(check);
      };
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`server exited (${code}) before ${re}:\n${stderr.join('\n')}`));
      });
      check();
    });
  const port = Number((await line(/serving http:\/\/[^:]+:(\d+)\/api\/v4/, startMs))[1]);
  return { proc, origin: `http://127.0.0.1:${port}`, port, stderr, stdout, exited, line };
}
