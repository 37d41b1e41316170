import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { classifyNetwork } from './network-type.ts';

describe('classifyNetwork', () => {
  it('should classify by known ASN first, then by name', () => {
    const cases: Array<[number, string, string]> = [
      [15169, 'Google LLC', 'DATACENTER'],
      [21928, 'T-Mobile USA, Inc.', 'MOBILE'],
      [14593, 'Space Exploration Technologies Corporation', 'SATELLITE'],
      [19972, 'Gogo LLC', 'IN_FLIGHT_WIFI'],
      [11537, 'Internet2', 'ACADEMIC'],
      [1, 'Massachusetts Institute of Technology', 'ACADEMIC'],
      [2, 'Stanford University', 'ACADEMIC'],
      [3, 'Ministry of Finance', 'GOVERNMENT'],
      [4, 'Hetzner Online GmbH', 'DATACENTER'],
      [5, 'Example Hosting Ltd', 'DATACENTER'],
      [6, 'Deutsche Telekom AG', 'RESIDENTIAL'],
      [7, 'Comcast Cable Communications, LLC', 'RESIDENTIAL'],
      [8, 'Acme Widgets Inc', 'CORPORATE'],
    ];
    for (const [asn, name, type] of cases) assert.equal(classifyNetwork(asn, name), type, name);
  });
});
