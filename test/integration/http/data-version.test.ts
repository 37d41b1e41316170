import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { dataVersion } from '../../../src/modules/lookup/data-version.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';
import { grpcClient } from '../../helpers/grpc-client.ts';
import { tinyDataset } from '../../helpers/tiny-dataset.ts';

const TINY_VERSION = 'dataset=1970-01-01T00:00:00Z; fixture=1; lists=0:0';

describe('X-Data-Version and list network types on IP lookups', () => {
  it('should name the data every IP lookup answers from, on HTTP (both front ends, single and batch) and gRPC', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    assert.equal(dataVersion(tinyDataset.info, []).header, TINY_VERSION);

    const injected = await app.http.inject({ url: '/api/v4/lookup/ip/8.8.8.8', headers: { 'x-api-key': key } });
    assert.equal(injected.headers['x-data-version'], TINY_VERSION);
    const explained = await app.http.inject({ url: '/api/v4/lookup/ip/8.8.8.8?explain=true', headers: { 'x-api-key': key } });
    assert.equal(explained.headers['x-data-version'], TINY_VERSION);
    const batch = await app.http.inject({
      method: 'POST',
      url: '/api/v4/lookup/ips',
      headers: { 'x-api-key': key },
      payload: { ips: ['8.8.8.8', '100.1.1.1'] },
    });
    assert.equal(batch.statusCode, 200);
    assert.equal(batch.headers['x-data-version'], TINY_VERSION);
    // Not on answers that are not IP data: errors, account, domains.
    assert.equal(
      (await app.http.inject({ url: '/api/v4/lookup/ip/nope', headers: { 'x-api-key': key } })).headers['x-data-version'],
      undefined,
    );
    assert.equal(
      (await app.http.inject({ url: '/api/v4/account/me', headers: { 'x-api-key': key } })).headers['x-data-version'],
      undefined,
    );

    // The fast path in front of fastify (a real socket) sends the same header.
    await app.http.listen({ port: 0, host: '127.0.0.1' });
    const port = (app.http.server.address() as { port: number }).port;
    const fast = await fetch(`http://127.0.0.1:${port}/api/v4/lookup/ip/2001:4860::1`, { headers: { 'x-api-key': key } });
    assert.equal(fast.status, 200);
    assert.equal(fast.headers.get('x-data-version'), TINY_VERSION);

    const grpcPort = await app.grpc.listen('127.0.0.1', 0);
    const client = grpcClient(grpcPort);
    t.after(() => client.close());
    const one = await client.unary('LookupIP', { ip_address: '8.8.8.8' }, key);
    assert.equal(one.trailers['x-data-version'], TINY_VERSION);
    const many = await client.unary('LookupIPs', { ips: ['8.8.8.8'] }, key);
    assert.equal(many.trailers['x-data-version'], TINY_VERSION);
  });

  it('should apply an imported network list to network.type (owner kept) and move the version with the lists', async (t) => {
    const app = await buildTestApp(t);
    const { key } = await app.team();
    const get = async (ip: string) => {
      const res = await app.http.inject({ url: `/api/v4/lookup/ip/${ip}`, headers: { 'x-api-key': key } });
      return { network: res.json().network, version: res.headers['x-data-version'] as string };
    };
    assert.equal((await get('100.64.0.9')).network.type, 'CORPORATE');

    const s = Math.floor(app.clock.now() / 1000);
    await app.stores.lists.put({
      kind: 'DATACENTER',
      provider: 'EXAMPLE_CLOUD',
      version: '00aa11bb22cc33dd',
      imported_at: s,
      published_at: s,
      published_from: 'import',
      format: 'cidr-lines',
      cidrs: ['100.64.0.0/16', '2001:4860:4860::/48'],
    });
    await app.refreshLists();
    const cloud = await get('100.64.0.9');
    assert.deepEqual(cloud.network, {
      asn: 4294967294,
      isp: 'Private Use AS',
      type: 'DATACENTER',
      org: null,
      domain: null,
      abuse_email: null,
      abuse_phone: null,
      // 100.64.0.0/10 is shared address space (RFC 6598): reserved, whatever the fixture's owner.
      bogon: true,
      anycast: false,
    });
    assert.equal((await get('100.65.0.9')).network.type, 'CORPORATE', 'outside the listed range');
    const explained = (await app.http.inject({ url: '/api/v4/lookup/ip/100.64.0.9?explain=true', headers: { 'x-api-key': key } })).json();
    assert.deepEqual(
      [explained.intelligence.categories, explained.intelligence.providers, explained.evidence.categories],
      [[], [], []],
      'a network type is not a category',
    );
    assert.equal((await get('2001:4860:4860::8888')).network.type, 'DATACENTER');
    const expected = dataVersion(tinyDataset.info, [{ kind: 'DATACENTER', provider: 'EXAMPLE_CLOUD', version: '00aa11bb22cc33dd' }]).header;
    assert.equal(cloud.version, expected);
    assert.match(expected, /; lists=1:[0-9a-f]{12}$/);

    // The batch answers from the same view.
    const batch = await app.http.inject({
      method: 'POST',
      url: '/api/v4/lookup/ips',
      headers: { 'x-api-key': key },
      payload: { ips: ['100.64.0.9', '100.65.0.9'] },
    });
    assert.deepEqual(
      batch.json().results.map((r: { network: { type: string } }) => r.network.type),
      ['DATACENTER', 'CORPORATE'],
    );
    assert.equal(batch.headers['x-data-version'], expected);

    await app.stores.lists.remove('DATACENTER', 'EXAMPLE_CLOUD');
    await app.refreshLists();
    const after = await get('100.64.0.9');
    assert.equal(after.network.type, 'CORPORATE');
    assert.equal(after.version, TINY_VERSION);
  });

  it('should report the live data to the operator (token only) at /internal/v1/data-status', async (t) => {
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: 'operator-secret-token-1' });
    const { key } = await app.team();
    assert.equal(
      (await app.http.inject({ url: '/internal/v1/data-status', headers: { authorization: `Bearer ${key}` } })).statusCode,
      401,
      'a customer key is not the operator token',
    );
    assert.equal((await app.http.inject({ url: '/internal/v1/data-status' })).headers['content-type'], 'application/problem+json');
    const res = await app.http.inject({ url: '/internal/v1/data-status', headers: { authorization: 'Bearer operator-secret-token-1' } });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.data_version, TINY_VERSION);
    assert.deepEqual(body.dataset.sources, { fixture: '1' });
    assert.deepEqual(body.lists, []);
    assert.equal(body.feeds.length, 8);
    assert.deepEqual(body.intelligence, {
      addresses: 0,
      anonymizer_ranges: 0,
      bytes: body.intelligence.bytes,
      budget_bytes: 256 * 2 ** 20,
      evictions: { addresses: 0, ranges: 0 },
    });
    assert.ok(
      body.intelligence.bytes > 0 && body.intelligence.bytes < 1e6,
      `an empty index holds its first arrays: ${body.intelligence.bytes}`,
    );
  });
});
