// Test helper of the *.crash.test.ts files: runs crash-child.fixture.ts and SIGKILLs it on cue.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CHILD = fileURLToPath(new URL('./export-crash-child.ts', import.meta.url));

/**
 * Runs one child (`mode` of crash-child.fixture.ts) to its end: killed `killAfterMs` after it says
 * `started`, or by itself at `killAt`, or finished. Resolves with whether it finished its job.
 */
export function runCrashChild(
  dir: string,
  mode: 'seed' | 'hourly' | 'reexport' | 'rollup',
  hourStartMs: number,
  rows: number,
  opts: { killAfterMs?: number; killAt?: string } = {},
): Promise<{ finished: boolean }> {
  return new Promise((resolve, reject) => {
    const args = [CHILD, dir, mode, String(hourStartMs), String(rows), ...(opts.killAt ? [opts.killAt] : [])];
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (opts.killAfterMs !== undefined && out.includes('started')) setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs);
    });
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (mode === 'seed' && code !== 0) reject(new Error(`${mode} child failed: ${code ?? signal}`));
      else resolve({ finished: out.includes('finished') });
    });
  });
}
