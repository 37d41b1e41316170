import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

  it('should refuse to start with an invalid UMBRA_PUBLIC_URL, saying what is wrong and what is expected, before touching the data dir', () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'umbra-public-url-'));
    try {
      for (const bad of [
        'intel.example.com',
        'ftp://intel.example.com',
        'https://intel.example.com/?via=proxy',
        'https://intel.example.com/#x',
      ]) {
        const r = umbra(['serve', '--http-port', '0', '--grpc-port', '0', '--data-dir', dataDir], { UMBRA_PUBLIC_URL: bad });
        assert.equal(r.status, 2, `${bad}: ${r.stderr}`);
        assert.match(
          r.stderr,
          /^umbra: invalid configuration:\n {2}UMBRA_PUBLIC_URL: must be an absolute http:\/\/ or https:\/\/ URL without query or fragment/,
          bad,
        );
        assert.doesNotMatch(r.stderr, /serving/);
      }
      assert.deepEqual(readdirSync(dataDir), [], 'nothing was written');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
