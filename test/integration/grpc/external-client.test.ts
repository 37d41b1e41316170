import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { FEEDS } from '../../../src/modules/feeds/feed-catalog.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';
import { sampleRecords } from '../../helpers/feed-fixtures.ts';
import { dropNulls } from '../../helpers/grpc-client.ts';

const INSTANTS = new Set(['first_seen', 'last_seen', 'imported_at', 'published_at', 'created_at']);
const UINT64 = new Set(['count', 'observations']);

/** HTTP JSON as protojson prints the mirrored message: instants (Unix s) as RFC 3339, uint64 as strings. */
function asProtojson(v: unknown, key?: string): unknown {
  if (Array.isArray(v)) return v.map((x) => asProtojson(x));
  if (typeof v === 'number' && key && INSTANTS.has(key)) return new Date(v * 1000).toISOString().replace('.000Z', 'Z');
  if (typeof v === 'number' && key && UINT64.has(key)) return String(v);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, asProtojson(x, k)]));
}

const SCRIPT = fileURLToPath(new URL('../../external/reflection_client.py', import.meta.url));
const POOL_CHECK = fileURLToPath(new URL('../../external/descriptor_pool_check.py', import.meta.url));

/** Runs a Python script of test/external; resolves with its stdout, rejects with its stderr. */
const runPython = (python: string, args: string[]): Promise<string> =>
  new Promise<string>((resolve, reject) =>
    execFile(python, args, { timeout: 30_000 }, (err, out, errText) =>
      err ? reject(new Error(`${err.message}\n${errText}`)) : resolve(out),
    ),
  );

/** A Python with Debian's grpcio and protobuf (UMBRA_PYTHON, else Debian's own, else PATH's). */
function findPython(): string | undefined {
  const candidates = [process.env.UMBRA_PYTHON, '/usr/bin/python3', 'python3'].filter((c): c is string => Boolean(c));
  for (const python of candidates) {
    try {
      execFileSync(python, ['-c', 'import grpc, google.protobuf'], { stdio: 'pipe' });
      return python;
    } catch {
      // not this one
    }
  }
  return undefined;
}

const python = findPython();
const missing =
  'needs python3 with python3-grpcio and python3-protobuf (apt-get install python3-grpcio python3-protobuf; .ci/run installs them)';

describe('an external client (Python grpcio, reflection only)', () => {
  // In CI a missing interpreter or package fails the run; on a workstation the test says why it skipped.
  it('should list example.v1.ExampleService over reflection v1 and v1alpha and call it dynamically', {
    skip: !python && process.env.CI !== 'true' ? missing : false,
  }, async (t) => {
    assert.ok(python, missing);
    const app = await buildTestApp(t);
    const port = await app.grpc.listen('127.0.0.1', 0);
    const { key, orgId } = await app.team();
    // An address with list, overlay and feed evidence, for the explained call.
    const explainIp = '185.220.101.1';
    const s = Math.floor(app.clock.now() / 1000);
    await app.stores.lists.put({
      kind: 'TOR_NODE',
      provider: 'TOR',
      version: '0123456789abcdef',
      imported_at: s - 60,
      published_at: s - 60,
      published_from: 'import',
      format: 'tor-bulk-exit-list',
      cidrs: [`${explainIp}/32`],
    });
    await app.stores.overlays.add({
      org_id: orgId,
      cidr: '185.220.101.0/24',
      category: 'BOTNET',
      provider: null,
      action: 'deny',
      created_at: s - 30,
    });
    await app.refreshLists();
    const http0 = sampleRecords(app.clock.now()).honeypot_http;
    const ingested = await app.services.ingest.ingest(FEEDS.honeypot_http, [[{ n: 1, value: { ...http0, source_ip: explainIp } }]]);
    assert.equal(ingested.accepted, 1);
    const got = JSON.parse(await runPython(python, [SCRIPT, `127.0.0.1:${port}`, key, explainIp]));
    for (const v of ['grpc.reflection.v1', 'grpc.reflection.v1alpha']) {
      assert.ok(got[v].services.includes('example.v1.ExampleService'), v);
      assert.deepEqual(got[v].timestamp_file, ['google/protobuf/timestamp.proto'], v);
    }
    assert.deepEqual(got.files, ['example/v1/example_service.proto', 'google/protobuf/struct.proto', 'google/protobuf/timestamp.proto']);
    assert.equal(got.methods.length, 15);
    assert.ok(got.methods.includes('StreamJA4T'));

    // protojson from a foreign runtime reads like the HTTP JSON of the same call.
    const http = await app.http.inject({ url: '/api/v4/lookup/ip/8.8.8.8', headers: { 'x-api-key': key } });
    assert.deepEqual(got.LookupIP.json, dropNulls(http.json()));
    // The explained lookup too, in protojson's terms: Timestamps as RFC 3339, uint64 counts as strings.
    const explained = await app.http.inject({ url: `/api/v4/lookup/ip/${explainIp}?explain=true`, headers: { 'x-api-key': key } });
    const evidence = explained.json().evidence;
    assert.deepEqual(
      evidence.categories.map((c: { sources: Array<{ source: string }> }) => c.sources[0]!.source).sort(),
      ['list', 'overlay'],
      JSON.stringify(evidence),
    );
    assert.equal(evidence.behavior.length > 0 && evidence.risk.behavior.from !== null, true);
    assert.deepEqual(got.LookupIPExplained.json.evidence, asProtojson(dropNulls(evidence)));
    assert.equal(
      got.GetAccountInfo.json.email,
      (await app.http.inject({ url: '/api/v4/account/me', headers: { 'x-api-key': key } })).json().email,
    );
    // int64 renders as a string under protojson.
    assert.equal(typeof got.GetAccountInfo.json.lookup_quota.credits, 'string');
    assert.deepEqual(got.LookupIPs.json.invalid, ['bogus']);
    assert.deepEqual(
      got.LookupIPs.json.results.map((r: { ip: string }) => r.ip),
      ['8.8.8.8', '1.1.1.1'],
    );
    assert.equal(got.unauthenticated.code, 'UNAUTHENTICATED');
  });

  // Never skipped, on a workstation either: a reflection client is entitled to canonical descriptors,
  // and only a foreign descriptor pool tells whether they are.
  it('should serve descriptors whose every type name is fully qualified and resolves in an independent descriptor pool', async (t) => {
    assert.ok(python, missing);
    const app = await buildTestApp(t);
    const port = await app.grpc.listen('127.0.0.1', 0);
    const got = JSON.parse(await runPython(python, [POOL_CHECK, `127.0.0.1:${port}`]));
    for (const v of ['grpc.reflection.v1', 'grpc.reflection.v1alpha']) {
      assert.deepEqual(got[v].problems, [], v);
      assert.deepEqual(
        got[v].files,
        ['example/v1/example_service.proto', 'google/protobuf/struct.proto', 'google/protobuf/timestamp.proto'],
        v,
      );
      // Every field of a message or enum type, and the 15 methods' input and output.
      assert.ok(got[v].checked > 2 * 15 + 50, `${v}: only ${got[v].checked} type names checked`);
    }
  });
});
