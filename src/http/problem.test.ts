import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv } from 'ajv';
import { fieldErrorsFromAjv, toProblem } from './problem.ts';

// As server.ts compiles request schemas: every error, with the failing schema at hand.
const ajv = new Ajv({ allErrors: true, strict: false, verbose: true, coerceTypes: true });

function errorsFor(schema: object, value: unknown, part = 'querystring') {
  const validate = ajv.compile(schema);
  assert.equal(validate(value), false);
  return fieldErrorsFromAjv(validate.errors as never, part);
}

describe('Validation failures as problem details', () => {
  it('should name the parameter and what it accepts, never the validator wording', () => {
    const query = {
      type: 'object',
      properties: {
        explain: { type: 'boolean' },
        limit: { type: 'integer', minimum: 1 },
        hour: { type: 'integer', minimum: 0, maximum: 23 },
        job: { type: 'string', enum: ['hourly', 'rollup'] },
        mode: { anyOf: [{ const: 'a' }, { const: 'b' }] },
      },
    };
    const fields = errorsFor(query, { explain: 'yes', limit: 'abc', hour: '24', job: 'x', mode: 'c' });
    assert.deepEqual(fields, {
      explain: ['must be true or false'],
      limit: ['must be an integer of at least 1'],
      hour: ['must be an integer from 0 to 23'],
      job: ['must be one of hourly, rollup'],
      mode: ['must be one of a, b'],
    });
  });

  it('should answer a 400 whose detail reads as a sentence about the parameter', () => {
    const validate = ajv.compile({ type: 'object', properties: { explain: { anyOf: [{ const: 'true' }, { const: 'false' }] } } });
    assert.equal(validate({ explain: 'yes' }), false);
    const problem = toProblem({ validation: validate.errors, validationContext: 'querystring', message: 'querystring/explain must be …' });
    assert.equal(problem.status, 400);
    assert.equal(problem.body.detail, 'explain: must be one of true, false');
    assert.doesNotMatch(JSON.stringify(problem.body), /constant|anyOf|schema/);
  });

  it('should name the item of a list and a missing member', () => {
    const body = {
      type: 'object',
      required: ['ips'],
      properties: { ips: { type: 'array', maxItems: 2, items: { type: 'string' } } },
    };
    const strict = new Ajv({ allErrors: true, strict: false, verbose: true });
    const check = (v: unknown) => {
      const validate = strict.compile(body);
      assert.equal(validate(v), false);
      return fieldErrorsFromAjv(validate.errors as never, 'body');
    };
    assert.deepEqual(check({ ips: ['1.1.1.1', 5] }), { ips: ['item 1 must be a string'] });
    assert.deepEqual(check({ ips: ['a', 'b', 'c'] }), { ips: ['must have at most 2 items'] });
    assert.deepEqual(check({ ips: 'x' }), { ips: ['must be an array of strings'] });
    assert.deepEqual(check({}), { ips: ['is required'] });
    assert.deepEqual(check([]), { body: ['must be a JSON object'] });
  });
});
