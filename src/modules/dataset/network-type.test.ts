import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { packagedSources } from './dataset-builder.ts';
import { ASN_GROUPS, classifyNetwork, explainNetworkType } from './network-type.ts';
import { OWNER_DOMAINS, ownerDomain } from './network-owners.ts';
import { readAsnCsv } from './sources.ts';

/** ASN → registered name, from the packaged RouteViews/NRO/DB-IP ASN tables (the data the dataset is built from). */
const names = new Map<number, string>();

describe('classifyNetwork over the real ASN data (@ip-location-db/asn)', () => {
  before(async () => {
    const s = packagedSources();
    for (const file of [s.asnV4, s.asnV6])
      await readAsnCsv(
        file,
        (_a, _b, asn, org) => void names.set(asn, org),
        () => {},
      );
    assert.ok(names.size > 80_000, `${names.size} ASNs read`);
  });

  it('should list each curated ASN once, and each is a real ASN of the data', () => {
    const seen = new Map<number, string>();
    for (const g of ASN_GROUPS) {
      assert.ok(g.source.length > 20, `${g.type} names its source`);
      for (const a of g.asns) {
        assert.ok(!seen.has(a), `AS${a} is in both ${seen.get(a)} and ${g.type}`);
        seen.set(a, g.type);
        assert.ok(names.has(a), `AS${a} (${g.type}) is not in the packaged ASN data`);
      }
    }
  });

  it('should give curated domains only to real ASNs, as bare lower-case host names', () => {
    assert.ok(OWNER_DOMAINS.size > 150, `${OWNER_DOMAINS.size} ASNs with a domain`);
    for (const [asn, domain] of OWNER_DOMAINS) {
      assert.ok(names.has(asn), `AS${asn} (${domain}) is not in the packaged ASN data`);
      assert.match(domain, /^[a-z0-9-]+(\.[a-z0-9-]+)+$/, `AS${asn}`);
    }
    assert.equal(ownerDomain(16509), 'amazon.com');
    assert.equal(ownerDomain(64512), undefined);
  });

  // [asn, the registered name it must have in the data, expected type]; the ASNs past the curated ones test the name rules.
  const TABLE: Array<[number, RegExp, string]> = [
    [16509, /^Amazon\.com/, 'DATACENTER'],
    [15169, /^Google LLC$/, 'DATACENTER'],
    [24940, /^Hetzner Online GmbH$/, 'DATACENTER'],
    [14061, /^DigitalOcean/, 'DATACENTER'],
    [63258, /^Web Hosting, Inc\.$/, 'DATACENTER'],
    [401026, /^Iron Mountain Data Center$/, 'DATACENTER'],
    [21928, /^T-Mobile USA/, 'MOBILE'],
    [6167, /^Verizon/, 'MOBILE'],
    [9808, /^China Mobile$/, 'MOBILE'],
    [51207, /^Free Mobile SAS$/, 'MOBILE'],
    [134927, /^Vodafone Idea/, 'MOBILE'],
    [138322, /^Afghan Wireless Communication Company$/, 'MOBILE'],
    [6739, /^VODAFONE ONO/, 'RESIDENTIAL'],
    [14593, /^Space Exploration Technologies Corporation$/, 'SATELLITE'],
    [6621, /^Hughes Network Systems/, 'SATELLITE'],
    [7155, /^ViaSat/, 'SATELLITE'],
    [31515, /^Inmarsat Global Limited$/, 'SATELLITE'],
    [64294, /^Panasonic Avionics Corporation$/, 'IN_FLIGHT_WIFI'],
    [11167, /^Gogo Business Aviation LLC$/, 'IN_FLIGHT_WIFI'],
    [400110, /^Anuvu Operations LLC$/, 'IN_FLIGHT_WIFI'],
    [20965, /^GEANT Vereniging$/, 'ACADEMIC'],
    [11537, /^Internet2$/, 'ACADEMIC'],
    [680, /Deutschen Forschungsnetzes/, 'ACADEMIC'],
    [57, /^University of Minnesota$/, 'ACADEMIC'],
    [1109, /^Universitaet Salzburg$/, 'ACADEMIC'],
    [34878, /^Karlsruhe Institute of Technology$/, 'ACADEMIC'],
    [400894, /^Humble Independent School District$/, 'ACADEMIC'],
    [24683, /^Federal State Budgetary Educational Institution of Higher Education "Orenburg/, 'ACADEMIC'],
    [721, /^DoD Network Information Center$/, 'GOVERNMENT'],
    [637, /^DoD Network Information Center$/, 'GOVERNMENT'],
    [3472, /^United States Department of Defense/, 'GOVERNMENT'],
    [57968, /^Ministry of Foreign Affairs$/, 'GOVERNMENT'],
    [54332, /^City of Boise$/, 'GOVERNMENT'],
    [46286, /^Cook County$/, 'GOVERNMENT'],
    [1226, /^California Department of Technology$/, 'GOVERNMENT'],
    [57580, /^Federal State Budgetary Institution "Research Center/, 'GOVERNMENT'],
    [7922, /^Comcast Cable Communications/, 'RESIDENTIAL'],
    [3320, /^Deutsche Telekom AG$/, 'RESIDENTIAL'],
    [40953, /^River City Wireless/, 'RESIDENTIAL'],
    // Issue 20's misclassifications: national ISPs, backbone carriers, Vodafone's fixed networks, hosts without a telling name.
    [2516, /^KDDI/, 'RESIDENTIAL'],
    [15557, /SFR/, 'RESIDENTIAL'],
    [9829, /^Bharat Sanchar/, 'RESIDENTIAL'],
    [9824, /^JCOM/, 'RESIDENTIAL'],
    [3356, /^Level 3/, 'CORPORATE'],
    [174, /^Cogent/, 'CORPORATE'],
    [3257, /^GTT/, 'CORPORATE'],
    [3561, /^CenturyLink/, 'CORPORATE'],
    [3209, /^Vodafone GmbH$/, 'RESIDENTIAL'],
    [202425, /^IP Volume/, 'DATACENTER'],
    [30058, /^FDCservers/, 'DATACENTER'],
    [43350, /^NForce/, 'DATACENTER'],
    [24875, /^NovoServe/, 'DATACENTER'],
    // Companies: by an industry word; with none, nothing is known and nothing is claimed.
    [396121, /^Bayer Corporation$/, 'UNKNOWN'],
    [24263, /^HONDA MOTOR/, 'CORPORATE'],
    [16493, /^Abercrombie & Fitch$/, 'UNKNOWN'],
    // Names that look like another class but are not (each once caught by a looser rule).
    [49854, /^Starlink Country LLC$/, 'UNKNOWN'],
    [395548, /^Hughes Federal Credit Union$/, 'CORPORATE'],
    [396286, /^Federal Cartridge Co\.$/, 'UNKNOWN'],
    [22209, /^RUDYS INFLIGHT CATERING$/, 'UNKNOWN'],
    [395737, /^University Federal Credit Union$/, 'CORPORATE'],
    [19972, /^ARRIS Technology/, 'UNKNOWN'],
    [394354, /^CIRA Canadian Internet Registration Authority/, 'CORPORATE'],
  ];

  it('should classify real networks by curated ASN, then by name', () => {
    for (const [asn, name, type] of TABLE) {
      const registered = names.get(asn) ?? '';
      assert.match(registered, name, `AS${asn}'s registered name`);
      assert.equal(classifyNetwork(asn, registered), type, `AS${asn} ${registered}: ${explainNetworkType(asn, registered).reason}`);
    }
  });

  it('should say where every type came from', () => {
    assert.deepEqual(explainNetworkType(15169, 'Google LLC'), {
      type: 'DATACENTER',
      source: 'asn',
      reason:
        "AS15169 is in the curated cloud and hosting operators group: cloud and hosting operators' own ASNs (registry records; the comments name each ASN's registered holder as the packaged ASN data gives it)",
    });
    assert.deepEqual(explainNetworkType(57, 'University of Minnesota'), {
      type: 'ACADEMIC',
      source: 'name',
      reason: 'the registered name (network.isp) has "University": a university, school or research network',
    });
    assert.deepEqual(explainNetworkType(16493, 'Abercrombie & Fitch'), {
      type: 'UNKNOWN',
      source: 'none',
      reason: 'no curated entry for the ASN and no telling word in its registered name',
    });
    // A Vodafone network is mobile unless a curated entry or a fixed-access word says otherwise.
    assert.equal(classifyNetwork(64512, 'Vodafone Example'), 'MOBILE');
    assert.equal(classifyNetwork(64512, 'Vodafone Kabel Example'), 'RESIDENTIAL');
    assert.equal(classifyNetwork(3209, 'Vodafone GmbH'), 'RESIDENTIAL');
  });

  it('should give every class a plausible share of the real networks', () => {
    const count: Record<string, number> = {};
    for (const [asn, name] of names) {
      const t = classifyNetwork(asn, name);
      count[t] = (count[t] ?? 0) + 1;
    }
    // Shares measured on the packaged 2026-06 data; bounds wide enough for rule tweaks, tight enough to catch a broken rule.
    const bounds: Record<string, [number, number]> = {
      UNKNOWN: [0.5, 0.75],
      CORPORATE: [0.03, 0.15],
      RESIDENTIAL: [0.1, 0.25],
      ACADEMIC: [0.02, 0.05],
      DATACENTER: [0.01, 0.04],
      GOVERNMENT: [0.005, 0.02],
      MOBILE: [0.001, 0.01],
      SATELLITE: [0.0005, 0.005],
      IN_FLIGHT_WIFI: [0.00003, 0.0005],
    };
    for (const [type, [lo, hi]] of Object.entries(bounds)) {
      const share = (count[type] ?? 0) / names.size;
      assert.ok(share >= lo && share <= hi, `${type}: ${count[type]} of ${names.size} (${(share * 100).toFixed(3)}%)`);
    }
  });
});
