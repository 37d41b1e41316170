import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { TSchema } from 'typebox';
import { FEEDS } from '../../../src/modules/feeds/feed-catalog.ts';
import { loadDataset } from '../../../src/modules/dataset/dataset-reader.ts';
import { PackedBatch } from '../../../src/modules/lookup/packed-batch.ts';
import { BatchResult } from '../../../src/http/schemas.ts';
import { buildTestApp, type TestApp } from '../../helpers/build-test-app.ts';
import { ensureRealDataset } from '../../helpers/test-dataset.ts';
import { routedBatches } from '../../helpers/routed-addresses.ts';

/**
 * The batch answer written from prepared bytes (PackedBatch, packedResultsWriter) against the route's
 * own schema serializer (fast-json-stringify, compiled by fastify for BatchResult) writing the same
 * lookups as objects: byte for byte, on the real dataset, over the C-client bench's batches and every
 * kind of address that must not be packed.
 */
async function setUp(t: Parameters<typeof buildTestApp>[0]) {
  const app = await buildTestApp(t, { dataset: loadDataset(await ensureRealDataset()) });
  const { key, orgId } = await app.team({ credits: 10_000_000, name: 'packed' });
  await app.services.admin.setLimit(orgId, 'lookup', { rate: 1e6, burst: 1e6 });
  const verified = await app.services.accounts.verifyKey(key);
  assert.ok(verified.ok);
  await app.http.ready();
  const compile = app.http.serializerCompiler!;
  const schemaSerializer = compile({ schema: BatchResult as TSchema, method: 'POST', url: '/lookup/ips', httpStatus: '200' }) as (
    data: unknown,
  ) => string;
  /** The route's answer over HTTP, and the schema serializer's text for the same lookups as objects. */
  const both = async (ips: string[]) => {
    const res = await app.http.inject({ method: 'POST', url: '/api/v4/lookup/ips', headers: { 'x-api-key': key }, payload: { ips } });
    assert.equal(res.statusCode, 200, res.body.slice(0, 300));
    const objects = await app.services.lookup.lookupIps(verified.caller, ips);
    return { got: res.body, want: schemaSerializer(objects.value), res };
  };
  return { app, key, orgId, caller: verified.caller, both };
}

/** How many of a batch's results are packed (given by handles) when looked up now. */
async function packedCount(app: TestApp, caller: Parameters<TestApp['services']['lookup']['lookupIps']>[0], ips: string[]) {
  const value = (await app.services.lookup.lookupIpsPacked(caller, ips)).value;
  return value instanceof PackedBatch ? value.results.filter((r) => r === undefined).length : -1;
}

describe('POST /api/v4/lookup/ips from prepared bytes', () => {
  it("should write the schema serializer's very bytes for the bench's batches, packing nearly every address", async (t) => {
    const { app, caller, both } = await setUp(t);
    const gauge = async () => Number(/^umbra_dataset_answer_bytes (\S+)$/m.exec((await app.http.inject({ url: '/metrics' })).body)?.[1]);
    // Nothing is made before a batch needs it.
    assert.equal(await gauge(), 0);
    const batches = routedBatches(2);
    for (const ips of batches) {
      const { got, want, res } = await both(ips);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.equal(got, want);
      assert.equal(JSON.parse(got).results.length, 1000);
    }
    // Asked again, every record's JSON is now made: the copies must still be the same bytes.
    const again = await both(batches[0]!);
    assert.equal(again.got, again.want);
    // The comparison is only worth something if the packed path answered: most routed addresses are plain.
    const packed = await packedCount(app, caller, batches[0]!);
    assert.ok(packed > 900, `${packed} of 1000 packed`);
    // 2,000 addresses' records: their JSON fits one 4 MiB chunk, which the gauge reports.
    assert.equal(await gauge(), 4 * 2 ** 20);
  });

  it('should answer every address that is not plain as the object path does, in input order, duplicates and invalid inputs as before', async (t) => {
    const { app, caller, both } = await setUp(t);
    const [random] = routedBatches(1);
    const peer = random![3]!;
    const overlaid = random![7]!;
    const s = Math.floor(app.clock.now() / 1000);
    // Known to the intelligence: a torrent peer, a Googlebot address (category list), a team overlay.
    const summary = await app.services.ingest.ingest(FEEDS.torrents, [
      [
        {
          n: 1,
          value: {
            info_hash: 'a'.repeat(40),
            name: 'ubuntu.iso',
            magnet_uri: `magnet:?xt=urn:btih:${'a'.repeat(40)}`,
            total_size: 10,
            piece_length: 1,
            file_count: 1,
            files: [{ path: 'ubuntu.iso', length: 10 }],
            peers: [{ ip: peer, port: 51413, source: 'DHT', encrypted: true }],
            timestamp: s,
          },
        },
      ],
    ]);
    assert.equal(summary.rejected, 0, JSON.stringify(summary.errors));
    await app.stores.lists.put({
      kind: 'SEARCH_ENGINE',
      provider: 'GOOGLEBOT',
      version: '9f86d081884c7d65',
      imported_at: s,
      published_at: s,
      published_from: 'import',
      format: 'google-prefixes',
      cidrs: ['66.249.64.0/27'],
    });
    const { OverlayService } = await import('../../../src/modules/intel/overlays/overlay-service.ts');
    const overlays = new OverlayService(app.stores.overlays, app.stores.accounts, app.clock);
    await overlays.add({ org: 'packed', cidr: `${overlaid}/32`, category: 'botnet', action: 'deny' });
    await app.refreshLists();
    const ips = [
      '8.8.8.8', // anycast by prefix
      '1.1.1.1',
      '10.0.0.1', // bogon (reserved)
      '192.0.2.1',
      '100.64.0.1',
      '0.0.0.0',
      '255.255.255.255',
      '2002:808:808::1', // 6to4
      '2001:0:4136:e378:8000:63bf:f7f7:f7f7', // Teredo
      '64:ff9b::808:808', // NAT64
      '::1',
      '2001:DB8::1',
      '2001:db8::1', // the same address, canonical
      'not-an-ip',
      '1.2.3',
      '66.249.64.1', // Googlebot
      peer,
      peer, // duplicate
      overlaid,
      ...random!.slice(10, 60),
      'not-an-ip', // invalid twice: listed once
    ];
    const { got, want } = await both(ips);
    assert.equal(got, want);
    const results = JSON.parse(got).results as Array<{ ip: string; intelligence: { behavior: string[]; categories: string[] } }>;
    assert.deepEqual(JSON.parse(got).invalid, ['not-an-ip', '1.2.3']);
    assert.deepEqual(results.find((r) => r.ip === peer)?.intelligence.behavior, ['TORRENTING']);
    assert.deepEqual(results.find((r) => r.ip === '66.249.64.1')?.intelligence.categories, ['SEARCH_ENGINE']);
    assert.deepEqual(results.find((r) => r.ip === overlaid)?.intelligence.categories, ['BOTNET']);
    // The plain ones are packed, the others are not.
    const value = (await app.services.lookup.lookupIpsPacked(caller, ips)).value;
    assert.ok(value instanceof PackedBatch);
    const objectFor = new Map(value.addresses.map((a, k) => [a.text, value.results[k] !== undefined]));
    for (const ip of ['8.8.8.8', '1.1.1.1', '10.0.0.1', '2002:808:808::1', '64:ff9b::808:808', '::1', '66.249.64.1', peer, overlaid]) {
      assert.equal(objectFor.get(ip), true, `${ip} must be answered as an object`);
    }
    assert.ok([...objectFor.values()].filter((o) => !o).length >= 40, 'the random addresses are packed');
  });

  it('should fall back to objects while a network list overrides network types, with the same bytes', async (t) => {
    const { app, caller, both } = await setUp(t);
    const [ips] = routedBatches(1);
    const s = Math.floor(app.clock.now() / 1000);
    await app.stores.lists.put({
      kind: 'DATACENTER',
      provider: 'AWS',
      version: '00112233445566aa',
      imported_at: s,
      published_at: s,
      published_from: 'content',
      format: 'aws-ip-ranges',
      cidrs: [`${ips![0]}/32`, '3.5.140.0/22'],
    });
    await app.refreshLists();
    assert.equal(await packedCount(app, caller, ips!), -1, 'overridden: no packed answer');
    const { got, want } = await both(ips!);
    assert.equal(got, want);
    assert.equal(JSON.parse(got).results[0].network.type, 'DATACENTER');
  });
});
