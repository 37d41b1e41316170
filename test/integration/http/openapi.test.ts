import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { HEADERS } from '../../../src/http/openapi.ts';
import { API_EXAMPLES } from '../../../src/http/openapi-examples.ts';
import { ALL_OPERATIONS, API_PREFIX, type Operation } from '../../../src/operations.ts';
import { captureExchanges } from '../../helpers/api-exchanges.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';

const PROBLEM = 'application/problem+json';
const ROOT = join(import.meta.dirname, '../../..');

type Json = Record<string, any>;

interface Located {
  op: Operation;
  path: string;
  method: string;
  operation: Json;
}

async function servedDocument(t: TestContext): Promise<Json> {
  const app = await buildTestApp(t);
  const res = await app.http.inject({ url: `${API_PREFIX}/openapi.json` });
  assert.equal(res.statusCode, 200);
  return res.json();
}

/** Every operation of the document with its operations.ts row. */
function operationsOf(doc: Json): Located[] {
  const out: Located[] = [];
  for (const [path, methods] of Object.entries(doc.paths as Record<string, Json>))
    for (const [method, operation] of Object.entries(methods as Record<string, Json>)) {
      const op = ALL_OPERATIONS.find((o) => o.id === operation.operationId);
      assert.ok(op, `${method} ${path}: operationId ${operation.operationId} is no operations.ts row`);
      out.push({ op, path, method, operation });
    }
  return out;
}

/** Validates a value against a schema at a JSON pointer of the document (its $refs resolved in it). */
function validatorOf(doc: Json): (pointer: string[]) => ValidateFunction {
  const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  ajv.addSchema({ ...doc, $id: 'urn:umbra:openapi' });
  const cache = new Map<string, ValidateFunction>();
  return (pointer) => {
    const ref = `urn:umbra:openapi#/${pointer.map((p) => encodeURIComponent(p.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`;
    let v = cache.get(ref);
    if (!v) cache.set(ref, (v = ajv.compile({ $ref: ref })));
    return v;
  };
}

const urlPath = (url: string) => url.split('?')[0]!;

describe('The OpenAPI document', () => {
  it('should declare every error answer as application/problem+json with the Problem schema', async (t) => {
    const doc = await servedDocument(t);
    let seen = 0;
    for (const { op, path, operation } of operationsOf(doc)) {
      for (const [code, response] of Object.entries(operation.responses as Record<string, Json>)) {
        // The health probe's 503 is its own report, as plain JSON (a load balancer reads it).
        if (Number(code) < 400 || op.id === 'health') continue;
        assert.deepEqual(Object.keys(response.content ?? {}), [PROBLEM], `${path} ${code}`);
        assert.equal(response.content[PROBLEM].schema.$ref, '#/components/schemas/Problem', `${path} ${code}`);
        seen++;
      }
    }
    assert.ok(seen > 200, `${seen} error responses`);
    assert.deepEqual(doc.components.schemas.Problem.required, ['type', 'title', 'status', 'detail', 'error']);
  });

  it('should document the headers of every answer where they are sent', async (t) => {
    const doc = await servedDocument(t);
    for (const { op, path, operation } of operationsOf(doc)) {
      for (const [code, response] of Object.entries(operation.responses as Record<string, Json>)) {
        const where = `${op.id} ${code}`;
        const headers = (response.headers ?? {}) as Record<string, Json>;
        assert.equal(headers['X-Request-Id']?.required, true, `${where}: X-Request-Id`);
        const status = Number(code);
        const problem = response.content?.[PROBLEM] !== undefined;
        if (op.bucket !== null && status !== 401 && status !== 403)
          for (const h of ['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset'])
            assert.equal(headers[h]?.schema?.type, 'integer', `${where}: ${h}`);
        if (status === 401 || status === 403) assert.equal(headers['RateLimit-Limit'], undefined, `${where}: no bucket consulted`);
        if (problem && (status === 429 || status === 503)) assert.equal(headers['Retry-After']?.required, true, `${where}: Retry-After`);
        if (status === 200 && op.cost.kind !== 'free') assert.equal(headers['X-Credits-Remaining']?.required, true, `${where}: credits`);
        if (status === 200 && (op.id === 'lookup.ip' || op.id === 'lookup.ips'))
          assert.equal(headers['X-Data-Version']?.required, true, `${where}: X-Data-Version`);
        if (status === 307) {
          assert.equal(headers.Location?.required, true, `${where}: Location`);
          assert.equal(response.content, undefined, `${where}: a redirect has no body`);
        }
      }
      if (path.endsWith('/export/{date}') || path.endsWith('/export/{date}/{hour}'))
        assert.deepEqual(
          Object.keys(operation.responses).filter((c) => c < '400'),
          ['307'],
          `${op.id} redirects`,
        );
    }
  });

  it('should type limit as an integer and explain as a boolean, and declare the licence', async (t) => {
    const doc = await servedDocument(t);
    const params = operationsOf(doc).flatMap(({ operation }) => (operation.parameters ?? []) as Json[]);
    const limits = params.filter((p) => p.name === 'limit');
    assert.equal(limits.length, 9, 'the domain lookup and the export list of each of 8 feeds');
    for (const p of limits) assert.deepEqual([p.schema.type, p.schema.minimum], ['integer', 1]);
    const explain = params.filter((p) => p.name === 'explain');
    assert.deepEqual(
      explain.map((p) => p.schema),
      [{ type: 'boolean', default: false }],
    );
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { license: string };
    assert.equal(doc.info.license.identifier, pkg.license);
    assert.match(doc.info.description, /CC BY 4\.0/, 'the IP data attribution stays');
  });

  it('should describe every operation, with example requests and answers that match their schemas', async (t) => {
    const doc = await servedDocument(t);
    const validate = validatorOf(doc);
    const located = operationsOf(doc);
    assert.equal(located.length, ALL_OPERATIONS.length, 'every operation is documented');
    for (const { op, path, method, operation } of located) {
      assert.ok(operation.description?.length > 40, `${op.id}: description`);
      const success = Object.keys(operation.responses).find((c) => c === '200' || c === '307')!;
      const response = operation.responses[success] as Json;
      if (success === '200') {
        const [media, body] = Object.entries(response.content as Record<string, Json>)[0]!;
        const examples = Object.entries((body.examples ?? {}) as Record<string, Json>);
        assert.ok(examples.length > 0, `${op.id}: an example answer`);
        for (const [name, example] of examples) {
          const v = validate(['paths', path, method, 'responses', success, 'content', media, 'schema']);
          assert.ok(v(example.value), `${op.id} example ${name}: ${JSON.stringify(v.errors)}`);
        }
      } else assert.match(response.headers.Location.example, /^https?:|^\//, `${op.id}: an example Location`);
      for (const [i, p] of ((operation.parameters ?? []) as Json[]).entries()) {
        if (p.in === 'path') assert.notEqual(p.example, undefined, `${op.id}: an example ${p.name}`);
        if (p.example === undefined) continue;
        const v = validate(['paths', path, method, 'parameters', String(i), 'schema']);
        assert.ok(v(p.example), `${op.id} parameter ${p.name}: ${JSON.stringify(v.errors)}`);
      }
      for (const [code, r] of Object.entries(operation.responses as Record<string, Json>)) {
        for (const [media, body] of Object.entries((r.content ?? {}) as Record<string, Json>))
          for (const [name, example] of Object.entries((body.examples ?? {}) as Record<string, Json>)) {
            const v = validate(['paths', path, method, 'responses', code, 'content', media, 'schema']);
            assert.ok(v(example.value), `${op.id} ${code} example ${name}: ${JSON.stringify(v.errors)}`);
          }
        for (const [name, h] of Object.entries((r.headers ?? {}) as Record<string, Json>)) {
          if (h.example === undefined) continue;
          const v = validate(['paths', path, method, 'responses', code, 'headers', name, 'schema']);
          assert.ok(v(h.example), `${op.id} ${code} header ${name} example ${h.example}: ${JSON.stringify(v.errors)}`);
        }
      }
      const body = operation.requestBody?.content?.['application/json'];
      if (body) {
        const examples = Object.entries((body.examples ?? {}) as Record<string, Json>);
        assert.ok(examples.length > 0, `${op.id}: an example request body`);
        for (const [name, example] of examples) {
          const v = validate(['paths', path, method, 'requestBody', 'content', 'application/json', 'schema']);
          assert.ok(v(example.value), `${op.id} request example ${name}: ${JSON.stringify(v.errors)}`);
        }
      }
    }
    // The kept examples are a capture of every operation (npm run examples rewrites them).
    assert.deepEqual(Object.keys(API_EXAMPLES).sort(), ALL_OPERATIONS.map((o) => o.id).sort());
  });

  it('should say what the server does: a fresh answer to every operation has a declared status, media type, body and headers', async (t) => {
    const doc = await servedDocument(t);
    const validate = validatorOf(doc);
    const located = operationsOf(doc);
    const answered = await captureExchanges(t);
    const ownHeaders = new Map([...Object.keys(HEADERS), 'Location'].map((h) => [h.toLowerCase(), h]));
    let checked = 0;
    for (const [id, exchanges] of Object.entries(answered)) {
      for (const x of exchanges) {
        const where = `${id} ${x.name} (${x.request.method} ${x.request.url} → ${x.status})`;
        const found = located.find(
          (l) => l.op.id === id && new RegExp(`^${l.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(urlPath(x.request.url)),
        );
        assert.ok(found, `${where}: not in the document`);
        const response = found.operation.responses[String(x.status)] as Json | undefined;
        assert.ok(response, `${where}: status not declared`);
        if (response.content) {
          const media = Object.keys(response.content)[0]!;
          assert.equal(x.contentType?.split(';')[0], media, `${where}: media type`);
          const v = validate(['paths', found.path, found.method, 'responses', String(x.status), 'content', media, 'schema']);
          assert.ok(v(x.body), `${where}: body does not match: ${JSON.stringify(v.errors)}`);
        } else assert.equal(x.body, undefined, `${where}: an undeclared body`);
        const declared = response.headers as Record<string, Json>;
        for (const [name, h] of Object.entries(declared))
          if (h.required) assert.ok(x.headers[name.toLowerCase()] !== undefined, `${where}: ${name} declared required, not sent`);
        for (const sent of Object.keys(x.headers)) {
          const name = ownHeaders.get(sent);
          if (name) assert.ok(declared[name], `${where}: sends ${name}, not documented`);
        }
        checked++;
      }
    }
    assert.ok(checked >= located.length, `${checked} answers`);
  });
});
