import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { canonicalProvider, KNOWN_PROVIDERS } from './provider-registry.ts';

describe(canonicalProvider.name, () => {
  it('should map a product-line tag to its provider, the product line becoming the variant', () => {
    assert.deepEqual(canonicalProvider('SMARTPROXY_MOBILE'), { provider: 'SMARTPROXY', variant: 'MOBILE' });
    assert.deepEqual(canonicalProvider('INFATICA_RESIDENTIAL'), { provider: 'INFATICA', variant: 'RESIDENTIAL' });
    assert.deepEqual(canonicalProvider('PROXYJET_DATACENTER'), { provider: 'PROXYJET', variant: 'DATACENTER' });
    assert.deepEqual(canonicalProvider('PROXY_SELLER_MOBILE'), { provider: 'PROXY_SELLER', variant: 'MOBILE' });
    assert.deepEqual(canonicalProvider('BRIGHT-DATA.ISP'), { provider: 'BRIGHTDATA', variant: 'ISP' });
  });

  it('should map other spellings and former names to one tag', () => {
    for (const [given, tag] of [
      ['SMARTPROXY', 'SMARTPROXY'],
      ['DECODO', 'SMARTPROXY'],
      ['DECODO_RESIDENTIAL', 'SMARTPROXY'],
      ['BRIGHT_DATA', 'BRIGHTDATA'],
      ['LUMINATI', 'BRIGHTDATA'],
      ['PROTON_VPN', 'PROTONVPN'],
      ['PRIVATE_INTERNET_ACCESS', 'PIA'],
      ['smartproxy', 'SMARTPROXY'],
    ] as const)
      assert.equal(canonicalProvider(given).provider, tag, given);
    assert.equal(canonicalProvider('PROTON_VPN').variant, undefined);
  });

  it('should keep an unknown tag as it is, upper-cased, suffix and all', () => {
    assert.deepEqual(canonicalProvider('ACME_PROXIES_MOBILE'), { provider: 'ACME_PROXIES_MOBILE' });
    assert.deepEqual(canonicalProvider('mirai'), { provider: 'MIRAI' });
    assert.deepEqual(canonicalProvider('DEMO_VPN_A'), { provider: 'DEMO_VPN_A' });
  });

  it('should give every known tag as its own canonical tag', () => {
    for (const tag of KNOWN_PROVIDERS) assert.deepEqual(canonicalProvider(tag), { provider: tag }, tag);
  });
});
