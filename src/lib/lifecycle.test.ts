import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Lifecycles, type Lifecycle } from './lifecycle.ts';

const part = (name: string, log: string[], failStart = false): Lifecycle => ({
  name,
  start: async () => {
    if (failStart) throw new Error(`${name} cannot start`);
    log.push(`start ${name}`);
  },
  stop: async () => void log.push(`stop ${name}`),
});

describe(Lifecycles.name, () => {
  it('should start parts in order and stop them in reverse, once', async () => {
    const log: string[] = [];
    const all = new Lifecycles([part('a', log), part('b', log), part('c', log)]);
    await all.start();
    await all.stop();
    await all.stop();
    assert.deepEqual(log, ['start a', 'start b', 'start c', 'stop c', 'stop b', 'stop a']);
  });

  it('should stop what had started when a part fails to start, and pass the error on', async () => {
    const log: string[] = [];
    const all = new Lifecycles([part('a', log), part('b', log, true), part('c', log)]);
    await assert.rejects(all.start(), /b cannot start/);
    assert.deepEqual(log, ['start a', 'stop a']);
  });
});
