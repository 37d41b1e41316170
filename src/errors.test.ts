import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { AppError, asAppError, dependencyFault, STATUS } from './errors.ts';

describe(dependencyFault.name, () => {
  it('should answer 503 with Retry-After when a distributed backend cannot use its engine (REDIS_UNAVAILABLE)', () => {
    const err = Object.assign(new Error('Redis is unavailable: Connection is closed.'), { code: 'REDIS_UNAVAILABLE' });
    const fault = dependencyFault(err);
    assert.ok(fault);
    assert.equal(fault.code, 'UNAVAILABLE');
    assert.equal(STATUS[fault.code].http, 503);
    assert.equal(fault.context.retryAfter, 5);
    assert.match(fault.message, /shared state store is unavailable right now \(REDIS_UNAVAILABLE\)/);
    assert.doesNotMatch(fault.message, /Connection is closed/, 'the driver message stays in the log');
    assert.equal(asAppError(err).code, 'UNAVAILABLE', 'gRPC and the CLI read it the same way');
  });

  it('should leave errors without a known code to be a 500', () => {
    assert.equal(dependencyFault(new Error('Command timed out')), undefined, 'a driver error not wrapped by its backend');
    assert.equal(dependencyFault(Object.assign(new Error('x'), { code: 'toString' })), undefined, 'no code matches by inheritance');
    assert.equal(dependencyFault(new AppError('UNAVAILABLE', 'already an answer')), undefined);
    assert.equal(asAppError(new Error('bug')).code, 'INTERNAL');
  });
});
