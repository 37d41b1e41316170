import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from '../helpers/umbra-cli.ts';

/** The version a release sets, read as an operator would. */
const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };

const umbra = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });

describe('the umbra command (built)', () => {
  it("should print package.json's version and exit 0 for --version and -V", () => {
    assert.match(version, /^\d+\.\d+\.\d+/);
    for (const flag of ['--version', '-V']) {
      const r = umbra([flag]);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout, `${version}\n`, flag);
      assert.equal(r.stderr, '', flag);
    }
  });
});
