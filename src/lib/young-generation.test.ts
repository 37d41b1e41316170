import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { SEMI_SPACE_FLAG, semiSpaceMiB, youngGenerationAdvice } from './young-generation.ts';

describe('young generation size', () => {
  it('should read the semi-space size from the command line or NODE_OPTIONS, the command line winning', () => {
    assert.equal(semiSpaceMiB([], undefined), undefined);
    assert.equal(semiSpaceMiB(['--import', 'tsx'], '--max-old-space-size=4096'), undefined);
    assert.equal(semiSpaceMiB(['--max-semi-space-size=32'], undefined), 32);
    assert.equal(semiSpaceMiB(['--max_semi_space_size', '64'], undefined), 64);
    assert.equal(semiSpaceMiB([], ' --max-semi-space-size=48  --enable-source-maps'), 48);
    assert.equal(semiSpaceMiB(['--max-semi-space-size=8'], '--max-semi-space-size=64'), 8);
    assert.equal(semiSpaceMiB(['--max-semi-space-size=16', '--max-semi-space-size=32'], undefined), 32);
    assert.equal(semiSpaceMiB(['--max-semi-space-size=lots'], undefined), undefined);
  });

  it('should advise the flag only when node runs with less than umbra is tuned for', () => {
    const none = youngGenerationAdvice([], undefined);
    assert.match(none ?? '', /V8's default semi-spaces/);
    assert.ok(none!.includes(`NODE_OPTIONS=${SEMI_SPACE_FLAG}`) && none!.includes(`node ${SEMI_SPACE_FLAG} bin/umbra.js serve`));
    assert.match(youngGenerationAdvice(['--max-semi-space-size=8'], undefined) ?? '', /runs with 8 MiB semi-spaces/);
    assert.equal(youngGenerationAdvice([SEMI_SPACE_FLAG], undefined), undefined);
    assert.equal(youngGenerationAdvice([], '--max-semi-space-size=64'), undefined);
  });

  it('should be what `npm start` and `npm run bench` pass to node', () => {
    const scripts = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts;
    assert.match(scripts.start, new RegExp(`^node ${SEMI_SPACE_FLAG} bin/umbra\\.js serve`));
    assert.match(scripts.bench, new RegExp(`^node ${SEMI_SPACE_FLAG} `));
  });
});
