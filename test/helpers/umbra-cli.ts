import { spawnSync } from 'node:child_process';
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
