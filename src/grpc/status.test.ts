import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { status } from '@grpc/grpc-js';
import { AppError, STATUS, type ErrorCode } from '../errors.ts';
import { toGrpcFailure } from './status.ts';
import { toProblem } from '../http/problem.ts';

describe(toGrpcFailure.name, () => {
  it('should map the contract’s HTTP statuses to its gRPC codes, and 402 to FAILED_PRECONDITION', () => {
    const expected: Partial<Record<ErrorCode, number>> = {
      VALIDATION_ERROR: status.INVALID_ARGUMENT,
      UNAUTHENTICATED: status.UNAUTHENTICATED,
      CREDITS_EXHAUSTED: status.FAILED_PRECONDITION,
      PERMISSION_DENIED: status.PERMISSION_DENIED,
      NOT_FOUND: status.NOT_FOUND,
      RATE_LIMITED: status.RESOURCE_EXHAUSTED,
      TOO_MANY_STREAMS: status.RESOURCE_EXHAUSTED,
      INTERNAL: status.INTERNAL,
      UNAVAILABLE: status.UNAVAILABLE,
    };
    for (const [code, grpc] of Object.entries(expected)) {
      assert.equal(toGrpcFailure(new AppError(code as ErrorCode, 'x')).code, grpc, code);
      assert.equal(STATUS[code as ErrorCode].grpc, grpc, code);
    }
  });

  it('should put an integer retry-after (at least 1 s) and the rate decision into the trailers', () => {
    const f = toGrpcFailure(new AppError('RATE_LIMITED', 'slow down', { retryAfter: 0.2 }), {
      allowed: false,
      limit: 10,
      remaining: 0,
      resetSeconds: 1,
      retryAfterSeconds: 1,
    });
    assert.equal(f.metadata['retry-after'], '1');
    assert.equal(f.metadata['ratelimit-limit'], '10');
    assert.equal(f.metadata['ratelimit-remaining'], '0');
    assert.equal(f.details, 'slow down');
  });

  it('should hide the text of unexpected errors and INTERNAL ones, but keep UNAVAILABLE’s', () => {
    for (const e of [new Error('db password is hunter2'), new AppError('INTERNAL', 'db password is hunter2')]) {
      const f = toGrpcFailure(e);
      assert.equal(f.code, status.INTERNAL);
      assert.doesNotMatch(f.details, /hunter2/);
    }
    assert.equal(
      toGrpcFailure(new AppError('UNAVAILABLE', 'The streaming backend is unavailable; retry shortly.')).details,
      'The streaming backend is unavailable; retry shortly.',
    );
  });

  it('should answer a storage fault as UNAVAILABLE with retry-after, as HTTP answers 503 or 507, never as INTERNAL', () => {
    for (const code of ['ENOSPC', 'EROFS', 'EIO', 'SQLITE_BUSY', 'SQLITE_FULL', 'SQLITE_IOERR_WRITE', 'SQLITE_READONLY']) {
      const f = toGrpcFailure(Object.assign(new Error(`${code}: /var/lib/umbra/feeds/x`), { code }));
      assert.equal(f.code, status.UNAVAILABLE, code);
      assert.ok(Number(f.metadata['retry-after']) >= 1, code);
      assert.doesNotMatch(f.details, /var\/lib/, 'no path in the detail');
      const problem = toProblem(Object.assign(new Error(code), { code }));
      assert.equal(problem.status, /ENOSPC|SQLITE_FULL/.test(code) ? 507 : 503, code);
      assert.ok(Number(problem.headers['retry-after']) >= 1);
    }
    // A bug stays INTERNAL (500), even with an errno-looking code of its own.
    assert.equal(toGrpcFailure(Object.assign(new Error('oops'), { code: 'ERR_INVALID_ARG_TYPE' })).code, status.INTERNAL);
    assert.equal(toProblem(Object.assign(new Error('oops'), { code: 'ERR_INVALID_ARG_TYPE' })).status, 500);
  });

  it('should answer NATS unreachable, too slow or refusing (the distributed feed log) as 503 with retry-after, naming no address', () => {
    for (const code of ['NATS_DISCONNECTED', 'NATS_TIMEOUT', 'NATS_NO_RESPONDERS', 'NATS_REFUSED', 'NATS_CLOSED']) {
      const err = Object.assign(new Error(`appending to the feed log at 10.0.0.5:4222: ${code}`), { code });
      const problem = toProblem(err);
      assert.equal(problem.status, 503, code);
      assert.ok(Number(problem.headers['retry-after']) >= 1, code);
      assert.doesNotMatch(problem.body.detail, /10\.0\.0\.5/, 'no address in the detail');
      assert.equal(toGrpcFailure(err).code, status.UNAVAILABLE, code);
    }
  });
});
