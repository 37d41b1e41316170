import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { Ajv } from 'ajv';
import Fastify from 'fastify';
import { Type } from 'typebox';
import { AppError } from '../errors.ts';
import { createLogger } from '../lib/logger.ts';
import type { Caller } from '../modules/accounts/account-service.ts';
import type { Operation } from '../operations.ts';
import type { Admit } from '../operation-guard.ts';
import { FastRoute, fastServerFactory } from './fast-route.ts';
import type { RecordResponse } from './response-log.ts';
import type { Answer } from './route-spec.ts';

const OP: Operation = {
  id: 'test.thing',
  method: 'GET',
  path: '/thing/:id',
  scope: 'BASIC',
  bucket: 'lookup',
  cost: { kind: 'free' },
  grpc: null,
  summary: 'test',
  description: 'a route for the fast path tests',
};
const CALLER = { keyId: 'k', orgId: 'o', scopes: new Set(['BASIC']) } as unknown as Caller;
const RATE = { allowed: true, limit: 10, remaining: 9, resetSeconds: 1, retryAfterSeconds: 0 };

/** A fastify app whose only route is answered by `answer`, with the fast path in front; returns its base URL. */
async function serve(t: TestContext, answer: Answer, recorded: Array<[string, number]>, errors: string[], querystring?: unknown) {
  const admit: Admit = () => ({ ok: true, caller: CALLER, rate: RATE });
  const record: RecordResponse = (_id, op, _m, _u, status) => void recorded.push([op, status]);
  const logger = createLogger('error', { write: (line: string) => errors.push(line) > 0 } as unknown as NodeJS.WritableStream);
  const response = { 200: Type.Object({ id: Type.String(), query: Type.Optional(Type.Record(Type.String(), Type.Unknown())) }) };
  const spec = {
    operation: OP,
    schema: { params: Type.Object({ id: Type.String({ maxLength: 8 }) }), querystring, response },
    answer,
    handler: () => ({}),
  };
  // The same validator settings as server.ts for path and query strings.
  const ajv = new Ajv({ coerceTypes: true, useDefaults: true, removeAdditional: true, allErrors: true, strict: false });
  const fast = new FastRoute(spec, { prefix: '/api', admit, record, logger, closing: () => false });
  const app = Fastify({ serverFactory: fastServerFactory(fast) });
  app.setValidatorCompiler(({ schema }) => ajv.compile(schema));
  app.get('/api/thing/:id', { schema: spec.schema }, async () => ({ id: 'from fastify' }));
  app.addHook('onReady', function (done) {
    fast.compile(this);
    done();
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.after(() => app.close());
  return `http://127.0.0.1:${(app.server.address() as { port: number }).port}/api/thing`;
}

async function waitFor(done: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
  assert.ok(done(), 'no answer within 2 s');
}

describe(FastRoute.name, () => {
  it('should serialize with the route schema: members outside it are not sent', async (t) => {
    const base = await serve(
      t,
      (_c, p: { id: string }) => ({ status: 200, headers: { 'x-extra': 7 }, body: { id: p.id, secret: 'not in the schema' } }),
      [],
      [],
    );
    const res = await fetch(`${base}/abc`);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '{"id":"abc"}');
    assert.equal(res.headers.get('x-extra'), '7');
    assert.equal(res.headers.get('ratelimit-remaining'), '9');
  });

  it('should hand invalid params to fastify', async (t) => {
    const base = await serve(t, () => ({ status: 200, headers: {}, body: { id: 'fast' } }), [], []);
    assert.equal(await (await fetch(`${base}/short`)).text(), '{"id":"fast"}');
    // Longer than the schema's maxLength: fastify's route (here without admission) answers its 400.
    assert.equal((await fetch(`${base}/much-too-long`)).status, 400);
  });

  it('should give the answer the query as fastify would (validated in place: coerced, with defaults) and hand an invalid one to fastify', async (t) => {
    const Query = Type.Object({ explain: Type.Boolean({ default: false }), limit: Type.Optional(Type.Integer()) });
    const base = await serve(
      t,
      (_c, p: { id: string }, q: Record<string, unknown>) => ({ status: 200, headers: {}, body: { id: p.id, query: q } }),
      [],
      [],
      Query,
    );
    assert.deepEqual(await (await fetch(`${base}/a?explain=true&limit=5&other=x`)).json(), {
      id: 'a',
      query: { explain: true, limit: 5, other: 'x' },
    });
    assert.deepEqual(await (await fetch(`${base}/a`)).json(), { id: 'a', query: { explain: false } });
    const invalid = await fetch(`${base}/a?explain=maybe`);
    assert.equal(invalid.status, 400, "fastify's route answers the validation error");
  });

  it('should turn a thrown AppError into its problem and a fault into a logged 500 that hides the details', async (t) => {
    const recorded: Array<[string, number]> = [];
    const errors: string[] = [];
    let mode = 'app';
    const base = await serve(
      t,
      () => {
        if (mode === 'app') throw new AppError('CREDITS_EXHAUSTED', 'no credits left');
        throw new Error('database on fire');
      },
      recorded,
      errors,
    );
    const denied = await fetch(`${base}/a`);
    assert.equal(denied.status, 402);
    assert.equal(denied.headers.get('content-type'), 'application/problem+json');
    assert.equal(((await denied.json()) as { detail: string }).detail, 'no credits left');
    mode = 'fault';
    const failed = await fetch(`${base}/a`);
    assert.equal(failed.status, 500);
    assert.doesNotMatch(await failed.text(), /fire/);
    assert.match(errors.join(''), /database on fire/);
    assert.deepEqual(recorded, [
      ['test.thing', 402],
      ['test.thing', 500],
    ]);
  });

  it('should answer 500 when node refuses a header of the answer, and keep serving', async (t) => {
    const recorded: Array<[string, number]> = [];
    let bad = true;
    const base = await serve(
      t,
      () => ({
        status: 200,
        headers: bad ? { 'x-data-version': 'v1\r\nx-injected: yes' } : ({} as Record<string, string>),
        body: { id: 'ok' },
      }),
      recorded,
      [],
    );
    const res = await fetch(`${base}/a`);
    assert.equal(res.status, 500);
    assert.equal(res.headers.get('x-injected'), null);
    assert.equal(res.headers.get('content-type'), 'application/problem+json');
    bad = false;
    assert.equal((await fetch(`${base}/a`)).status, 200);
    assert.deepEqual(recorded, [
      ['test.thing', 500],
      ['test.thing', 200],
    ]);
  });

  it('should write, from the raw reader, the bytes node writes for the same answer', async (t) => {
    const base = await serve(t, (_c, p: { id: string }) => ({ status: 200, headers: { 'x-extra': 7 }, body: { id: p.id } }), [], []);
    const { port } = new URL(base);
    // The same request twice on one connection; a latin1 byte in a header the answer ignores makes the
    // raw reader hand the second to node (http/raw-http1.ts), which serves it through serve().
    const head = 'GET /api/thing/abc HTTP/1.1\r\nHost: x\r\nx-request-id: r1\r\n';
    const socket = connect(Number(port), '127.0.0.1');
    let text = '';
    socket.on('data', (d: Buffer) => (text += d.toString('latin1')));
    socket.write(`${head}\r\n`);
    await waitFor(() => text.endsWith('{"id":"abc"}'));
    const raw = text;
    text = '';
    socket.write(`${head}x-note: caf\xe9\r\n\r\n`, 'latin1');
    await waitFor(() => text.endsWith('{"id":"abc"}'));
    socket.destroy();
    const withoutDate = (s: string) => s.replace(/\r\nDate: [^\r]+/, '');
    assert.match(raw, /\r\nDate: \w{3}, /);
    assert.equal(withoutDate(raw), withoutDate(text));
    assert.match(
      raw,
      /^HTTP\/1\.1 200 OK\r\nx-request-id: r1\r\nratelimit-limit: 10\r\nratelimit-remaining: 9\r\nratelimit-reset: 1\r\nx-extra: 7\r\ncontent-type: application\/json; charset=utf-8\r\ncontent-length: 12\r\n/,
    );
  });

  it('should refuse a route it cannot serve', () => {
    const options = {
      prefix: '/api',
      admit: (() => undefined) as never,
      record: () => {},
      logger: createLogger('silent'),
      closing: () => false,
    };
    const spec = (path: string) => ({ operation: { ...OP, path }, schema: {}, answer: (() => undefined) as never, handler: () => ({}) });
    assert.throws(() => new FastRoute(spec('/thing/:id/more'), options), /one \/:param/);
    assert.throws(() => new FastRoute(spec('/:a/:b'), options), /one \/:param/);
    assert.doesNotThrow(() => new FastRoute(spec('/thing/:id'), options));
  });
});
