import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { networkTypeOverride } from '../intel/lists/network-type-override.ts';
import type { IntelList } from '../intel/lists/intel-list.ts';
import { EMPTY_LOCATION, UNKNOWN_NETWORK, type IpDataset, type NetworkRecord } from './ip-dataset.ts';
import { parseIp } from '../../lib/ip-address.ts';
import { LookupData } from './lookup-data.ts';

const ISP: NetworkRecord = Object.freeze({
  asn: 3320,
  isp: 'Deutsche Telekom AG',
  type: 'RESIDENTIAL',
  org: null,
  domain: null,
  abuse_email: null,
  abuse_phone: null,
});
const dataset = (builtAt: number, asn = 3320): IpDataset => ({
  info: {
    built_at: builtAt,
    sources: { fixture: '1' },
    counts: { v4_network_ranges: 1, v6_network_ranges: 0, v4_location_ranges: 0, v6_location_ranges: 0 },
  },
  network: (ip) => (ip.version === 4 && ip.v4 >>> 24 === 80 ? (asn === 3320 ? ISP : { ...ISP, asn }) : UNKNOWN_NETWORK),
  location: () => EMPTY_LOCATION,
});
const list = (kind: string, provider: string, cidrs: string[], version = 'v1'): IntelList => ({
  kind,
  provider,
  version,
  imported_at: 0,
  published_at: 0,
  published_from: 'import',
  format: 'cidr-lines',
  cidrs,
});
const ip = (t: string) => parseIp(t)!;

describe('LookupData', () => {
  it('should let a network list override network.type inside its ranges only, keeping the owner', () => {
    const data = new LookupData(dataset(1_700_000_000));
    const lists = [list('DATACENTER', 'HOSTER', ['80.1.2.0/24']), list('TOR_NODE', 'TOR', ['80.1.3.1/32'])];
    data.setLists(lists, networkTypeOverride(lists, 0));
    const v = data.view();
    assert.deepEqual(v.network(ip('80.1.2.9')), { ...ISP, type: 'DATACENTER' });
    assert.equal(v.network(ip('80.1.3.1')), ISP, 'a category list is not a network type');
    assert.equal(v.network(ip('80.1.4.1')), ISP);
    assert.equal(v.network(ip('80.1.2.9')), v.network(ip('80.1.2.200')), 'one shared record per (record, type): no allocation per lookup');
    assert.ok(Object.isFrozen(v.network(ip('80.1.2.9'))));
    assert.match(v.version.header, /; lists=2:[0-9a-f]{12}$/);
  });

  it('should swap the dataset as one new view: a view taken before keeps answering from the old data', () => {
    const data = new LookupData(dataset(1_700_000_000));
    const before = data.view();
    data.swapDataset(dataset(1_700_003_600, 64_500));
    const after = data.view();
    assert.equal(before.network(ip('80.0.0.1')).asn, 3320);
    assert.equal(after.network(ip('80.0.0.1')).asn, 64_500);
    assert.match(before.version.header, /^dataset=2023-11-14T22:13:20Z; fixture=1; lists=0:0$/);
    assert.match(after.version.header, /^dataset=2023-11-14T23:13:20Z; /);
  });

  it('should keep list overrides and versions across a dataset swap, and drop them when the lists go', () => {
    const data = new LookupData(dataset(1_700_000_000));
    const lists = [list('DATACENTER', 'HOSTER', ['80.1.2.0/24'])];
    data.setLists(lists, networkTypeOverride(lists, 0));
    data.swapDataset(dataset(1_700_003_600));
    assert.equal(data.view().network(ip('80.1.2.9')).type, 'DATACENTER');
    assert.match(data.view().version.header, /lists=1:/);
    data.setLists([], networkTypeOverride([], 0));
    assert.equal(data.view().network(ip('80.1.2.9')).type, 'RESIDENTIAL');
    assert.match(data.view().version.header, /lists=0:0$/);
  });

  it("should give an address of a cloud's list that the ASN data does not announce the cloud's own ASN, and say why", () => {
    const data = new LookupData({
      ...dataset(1_700_000_000),
      networkTypeEvidence: (a) =>
        a.version === 4 && a.v4 >>> 24 === 80
          ? { source: 'asn', reason: 'curated consumer ISP' }
          : { source: 'none', reason: 'in no announced range' },
    });
    const lists = [list('DATACENTER', 'AWS', ['3.5.140.0/22', '80.9.0.0/16']), list('DATACENTER', 'HOSTER', ['80.1.2.0/24'])];
    data.setLists(lists, networkTypeOverride(lists, 0));
    const v = data.view();
    const aws = { asn: 16509, isp: 'Amazon.com, Inc.', org: 'Amazon.com, Inc.', domain: 'amazon.com' };
    assert.deepEqual(v.network(ip('3.5.140.1')), { ...UNKNOWN_NETWORK, ...aws, type: 'DATACENTER' });
    assert.equal(v.network(ip('3.5.140.1')), v.network(ip('3.5.143.255')), 'one shared record');
    assert.deepEqual(v.networkEvidence(ip('3.5.140.1')), {
      type: 'DATACENTER',
      source: 'list',
      reason:
        'the address is in the imported DATACENTER list of AWS (published 1970-01-01); the ASN data says UNKNOWN (in no announced range); ' +
        "the ASN data has no ASN for it, so it is the publisher's AS16509",
    });
    // Where the ASN data has an owner, it stays: only the type is the list's.
    assert.deepEqual(v.network(ip('80.9.0.1')), { ...ISP, type: 'DATACENTER' });
    assert.deepEqual(v.network(ip('80.1.2.9')), { ...ISP, type: 'DATACENTER' });
    assert.deepEqual(v.networkEvidence(ip('80.1.2.9')), {
      type: 'DATACENTER',
      source: 'list',
      reason:
        'the address is in the imported DATACENTER list of HOSTER (published 1970-01-01); the ASN data says RESIDENTIAL (curated consumer ISP)',
    });
    assert.deepEqual(v.networkEvidence(ip('80.1.4.1')), { type: 'RESIDENTIAL', source: 'asn', reason: 'curated consumer ISP' });
  });

  it('should say so when the dataset does not record where its types come from', () => {
    const v = new LookupData(dataset(1_700_000_000)).view();
    assert.deepEqual(v.networkEvidence(ip('80.1.4.1')), {
      type: 'RESIDENTIAL',
      source: 'none',
      reason: 'the IP dataset does not record where its types come from',
    });
  });
});
