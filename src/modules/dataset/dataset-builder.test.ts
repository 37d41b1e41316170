import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EMPTY_LOCATION } from '../lookup/ip-dataset.ts';
import { parseIp } from '../../lib/ip-address.ts';
import { buildDataset, type DatasetSources } from './dataset-builder.ts';
import { FORMAT_VERSION } from './dataset-format.ts';
import { loadDataset } from './dataset-reader.ts';

function fixture(): { dir: string; sources: DatasetSources } {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-ds-'));
  writeFileSync(
    join(dir, 'v4.csv'),
    [
      '8.8.8.0,8.8.8.255,15169,Google LLC',
      '9.0.0.0,9.0.0.255,4294967294,"Quoted, ""Name"" Inc"',
      '9.0.1.0,9.0.1.255,4294967294,"Quoted, ""Name"" Inc"',
      '',
    ].join('\n'),
  );
  writeFileSync(join(dir, 'v6.csv'), '2001:db8::,2001:db8:ffff:ffff:ffff:ffff:ffff:ffff,64500,Example Broadband\n');
  const place = { country_code: 'DE', state1: 'Berlin', city: 'Berlin', latitude: 52.52, longitude: 13.405 };
  return {
    dir,
    sources: {
      asnV4: join(dir, 'v4.csv'),
      asnV6: join(dir, 'v6.csv'),
      cityV4: [
        { start: '8.8.8.0', end: '8.8.8.127', ...place },
        { start: '8.8.8.128', end: '8.8.8.255', ...place },
        { start: '9.0.0.0', end: '9.0.0.0', country_code: 'US', state1: '', city: '', latitude: null, longitude: null },
      ],
      cityV6: [{ start: '2001:db8::', end: '2001:db8::ffff', ...place }],
      versions: { fixture: '1' },
    },
  };
}

describe('buildDataset', () => {
  it('should answer exact range edges, merge neighbours and dedupe records', async () => {
    const { dir, sources } = fixture();
    const phases = new Set<string>();
    const info = await buildDataset({
      outFile: join(dir, 'ds.bin'),
      sources,
      now: () => 1_700_000_000_000,
      onProgress: (p) => phases.add(p.phase),
    });
    assert.equal(info.built_at, 1_700_000_000);
    assert.deepEqual(info.sources, { fixture: '1' });
    assert.ok(phases.has('writing') && phases.has('ASN ranges (IPv4)'));
    assert.equal(existsSync(join(dir, 'ds.bin.tmp')), false, 'no temporary file left');
    const ds = loadDataset(join(dir, 'ds.bin'));
    const net = (a: string) => ds.network(parseIp(a)!);
    const loc = (a: string) => ds.location(parseIp(a)!);
    assert.equal(net('8.8.7.255').asn, 0);
    assert.equal(net('8.8.8.0').asn, 15169);
    assert.equal(net('8.8.8.255').asn, 15169);
    assert.equal(net('8.8.9.0').asn, 0);
    assert.equal(net('9.0.1.255').isp, 'Quoted, "Name" Inc');
    assert.equal(net('9.0.1.255').asn, 4294967294);
    assert.equal(net('9.0.0.0'), net('9.0.1.0'), 'one shared record');
    assert.equal(info.counts.v4_network_ranges, 5, 'gap, google, gap, merged 9.0.0.0/23, tail gap');
    assert.equal(net('2001:db8::1').asn, 64500);
    assert.equal(net('2001:db9::').asn, 0);
    assert.deepEqual(loc('8.8.8.200'), {
      country: 'DE',
      state: 'Berlin',
      city: 'Berlin',
      timezone: 'Europe/Berlin',
      latitude: 52.52,
      longitude: 13.405,
      geo_hash: 'u33dc0c',
      precision: 'city',
      accuracy_radius_km: 50,
    });
    assert.equal(loc('8.8.8.0'), loc('8.8.8.255'));
    assert.deepEqual(loc('9.0.0.0'), { ...EMPTY_LOCATION, country: 'US', precision: 'country', accuracy_radius_km: null });
    assert.equal(loc('9.0.0.1'), EMPTY_LOCATION);
    assert.equal(loc('2001:db8::ffff').city, 'Berlin');
    assert.equal(loc('2001:db8::1:0'), EMPTY_LOCATION);
  });

  it('should store the owner and where each type came from', async () => {
    const { dir, sources } = fixture();
    await buildDataset({ outFile: join(dir, 'ds.bin'), sources });
    const ds = loadDataset(join(dir, 'ds.bin'));
    const at = (a: string) => parseIp(a)!;
    assert.deepEqual(ds.network(at('8.8.8.8')), {
      asn: 15169,
      isp: 'Google LLC',
      type: 'DATACENTER',
      org: 'Google LLC',
      domain: 'google.com',
      abuse_email: null,
      abuse_phone: null,
      bogon: false,
      anycast: false,
    });
    assert.deepEqual(ds.networkTypeEvidence(at('8.8.8.8')), {
      source: 'asn',
      reason:
        "AS15169 is in the curated cloud and hosting operators group: cloud and hosting operators' own ASNs (registry records; the comments name each ASN's registered holder as the packaged ASN data gives it)",
    });
    // A name with no telling word and no curated entry: nothing is claimed.
    assert.equal(ds.network(at('9.0.0.1')).type, 'UNKNOWN');
    assert.equal(ds.network(at('9.0.0.1')).org, 'Quoted, "Name" Inc');
    assert.equal(ds.network(at('9.0.0.1')).domain, null);
    assert.deepEqual(ds.networkTypeEvidence(at('9.0.0.1')), {
      source: 'none',
      reason: 'no curated entry for the ASN and no telling word in its registered name',
    });
    assert.deepEqual(ds.networkTypeEvidence(at('2001:db8::1')), {
      source: 'name',
      reason: 'the registered name (network.isp) has "Broadband": a fixed access network (cable, DSL, fibre or broadband)',
    });
    assert.deepEqual(ds.networkTypeEvidence(at('8.8.9.0')), {
      source: 'none',
      reason: 'the address is in no announced range of the ASN data',
    });
  });

  it('should refuse files that are not datasets, truncated or of another format', async () => {
    const { dir, sources } = fixture();
    const file = join(dir, 'ds.bin');
    await buildDataset({ outFile: file, sources });
    const good = readFileSync(file);
    writeFileSync(join(dir, 'junk.bin'), 'hello world, not a dataset');
    assert.throws(() => loadDataset(join(dir, 'junk.bin')), /not an umbra IP dataset/);
    writeFileSync(join(dir, 'short.bin'), good.subarray(0, good.length - 9));
    assert.throws(() => loadDataset(join(dir, 'short.bin')), /truncated/);
    for (const format of [1, 9]) {
      // 1 is the layout before the merged tables: a file cached from it must be rebuilt, not misread.
      const other = Buffer.from(good);
      const header = other
        .subarray(16, 16 + other.readUInt32LE(8))
        .toString()
        .replace(`"format":${FORMAT_VERSION}`, `"format":${format}`);
      other.write(header, 16);
      writeFileSync(join(dir, 'other.bin'), other);
      assert.throws(
        () => loadDataset(join(dir, 'other.bin')),
        new RegExp(`format ${format}, this umbra reads ${FORMAT_VERSION}; rebuild it with 'umbra data build'`),
      );
    }
  });
});
