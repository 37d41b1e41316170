import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EXIT, type Output, reportFailure } from './output.ts';

/** An Output that keeps its lines (human mode). */
function capture(): Output & { lines: string[] } {
  const lines: string[] = [];
  return { json: false, lines, result: () => {}, info: (m: string) => void lines.push(m) };
}

const fault = (code: string, message: string, extra: object = {}) => Object.assign(new Error(message), { code }, extra);

describe('reportFailure', () => {
  it('should name the engine a distributed fault comes from, not the data dir', () => {
    const cases: Array<[Error, string]> = [
      [
        fault('NATS_UNREACHABLE', 'NATS is not reachable at 127.0.0.1:4222 (timeout)'),
        'umbra: the feed log (NATS) is unavailable (NATS_UNREACHABLE); nothing was changed. (NATS is not reachable at 127.0.0.1:4222 (timeout))',
      ],
      [
        fault('REDIS_UNAVAILABLE', 'Redis is unavailable: Connection is closed.'),
        'umbra: the shared state store is unavailable (REDIS_UNAVAILABLE); nothing was changed. (Redis is unavailable: Connection is closed.)',
      ],
      [
        fault('DEPENDENCY_UNAVAILABLE', 'S3 did not answer', { dependency: 'object store (S3)' }),
        'umbra: the object store (S3) is unavailable (DEPENDENCY_UNAVAILABLE); nothing was changed. (S3 did not answer)',
      ],
      [
        fault('EROFS', 'read-only file system'),
        'umbra: the data dir cannot be written (EROFS); nothing was changed. (read-only file system)',
      ],
    ];
    for (const [e, line] of cases) {
      const out = capture();
      assert.equal(reportFailure(out, e), EXIT.FAILED);
      assert.deepEqual(out.lines, [line]);
    }
  });
});
