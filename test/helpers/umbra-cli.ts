import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';

export const BIN = join(import.meta.dirname, '../../bin/umbra.js');

/** Runs an `umbra --json` verb on a data dir to completion, as an operator's script would. */
export function umbraCli(dataDir: string, args: string[], input?: string): { code: number; json: any; stderr: string } {
  const r = spawnSync(process.execPath, [BIN, '--json', '--data-dir', dataDir, ...args], { encoding: 'utf8', input });
  let json: unknown;
  try {
    json = JSON.parse(r.stdout);
  } catch {
    json = undefined;
  }
  return { code: r.status ?? -1, json, stderr: r.stderr };
}

/**
 * The same, without blocking the test's event loop (which may serve an in-process S3 the verb talks
 * to), with extra environment (a distributed configuration), so several verbs can run at once.
 */
export function umbraCliAsync(
  dataDir: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; json: any; stdout: string; stderr: string }> {
  const p = spawn(process.execPath, [BIN, '--json', '--data-dir', dataDir, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let stdout = '';
  let stderr = '';
  p.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  p.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  return new Promise((resolve) => {
    p.once('close', (code) => {
      let json: unknown;
      try {
        json = JSON.parse(stdout);
      } catch {
        json = undefined;
      }
      resolve({ code: code ?? -1, json, stdout, stderr });
    });
  });
}
