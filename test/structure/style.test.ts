import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(import.meta.dirname, '../..');

describe('The code style', () => {
  it('should pass Biome (biome.jsonc): formatted within 140 columns, and no lint error such as an explicit any', () => {
    const r = spawnSync(
      process.execPath,
      [join(ROOT, 'node_modules/@biomejs/biome/bin/biome'), 'ci', '.', '--colors=off', '--max-diagnostics=50'],
      { cwd: ROOT, encoding: 'utf8' },
    );
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}\nFix with: npx biome check --write .`);
  });
});
