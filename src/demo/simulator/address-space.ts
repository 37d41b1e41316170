/**
 * Real public prefixes, each checked against the RouteViews/NRO ASN table umbra ships (the owner named
 * here is the AS that announces most of the block), so deps.network() gives matching ASNs and countries.
 * `kind` says which feeds may draw from the block.
 */
export type SpaceKind = 'residential' | 'mobile' | 'hosting' | 'enterprise' | 'relay' | 'tor' | 'scanner' | 'crawler' | 'resolver';

export interface Prefix {
  cidr: string;
  owner: string;
  kind: SpaceKind;
}

export const PREFIXES: readonly Prefix[] = [
  // Residential broadband.
  { cidr: '73.0.0.0/8', owner: 'COMCAST', kind: 'residential' },
  { cidr: '24.0.0.0/12', owner: 'COMCAST', kind: 'residential' },
  { cidr: '2601::/20', owner: 'COMCAST', kind: 'residential' },
  { cidr: '71.80.0.0/13', owner: 'CHARTER', kind: 'residential' },
  { cidr: '79.192.0.0/10', owner: 'DTAG', kind: 'residential' },
  { cidr: '84.128.0.0/10', owner: 'DTAG', kind: 'residential' },
  { cidr: '2003:c0::/26', owner: 'DTAG', kind: 'residential' },
  { cidr: '86.128.0.0/10', owner: 'BT', kind: 'residential' },
  { cidr: '2a00:23c8::/29', owner: 'BT', kind: 'residential' },
  { cidr: '86.0.0.0/13', owner: 'VIRGIN_MEDIA', kind: 'residential' },
  { cidr: '90.0.0.0/9', owner: 'ORANGE_FR', kind: 'residential' },
  { cidr: '88.160.0.0/11', owner: 'FREE', kind: 'residential' },
  { cidr: '83.32.0.0/11', owner: 'TELEFONICA_ES', kind: 'residential' },
  { cidr: '2a02:8108::/32', owner: 'VODAFONE_DE', kind: 'residential' },
  { cidr: '14.160.0.0/11', owner: 'VNPT', kind: 'residential' },
  { cidr: '117.80.0.0/12', owner: 'CHINANET', kind: 'residential' },
  // Mobile carriers (CGNAT egress: many users behind one address, the mobile-proxy signature).
  { cidr: '172.56.0.0/14', owner: 'TMOBILE_US', kind: 'mobile' },
  { cidr: '2607:fb90::/32', owner: 'TMOBILE_US', kind: 'mobile' },
  { cidr: '174.192.0.0/10', owner: 'VERIZON_WIRELESS', kind: 'mobile' },
  { cidr: '166.170.0.0/15', owner: 'ATT_MOBILITY', kind: 'mobile' },
  { cidr: '1.128.0.0/11', owner: 'TELSTRA', kind: 'mobile' },
  { cidr: '49.32.0.0/12', owner: 'JIO', kind: 'mobile' },
  { cidr: '2409:4000::/22', owner: 'JIO', kind: 'mobile' },
  { cidr: '176.0.0.0/13', owner: 'TELEFONICA_DE', kind: 'mobile' },
  // Hosting and cloud.
  { cidr: '88.198.0.0/16', owner: 'HETZNER', kind: 'hosting' },
  { cidr: '95.216.0.0/15', owner: 'HETZNER', kind: 'hosting' },
  { cidr: '2a01:4f8::/32', owner: 'HETZNER', kind: 'hosting' },
  { cidr: '51.68.0.0/16', owner: 'OVH', kind: 'hosting' },
  { cidr: '54.36.0.0/14', owner: 'OVH', kind: 'hosting' },
  { cidr: '2001:41d0::/32', owner: 'OVH', kind: 'hosting' },
  { cidr: '159.203.0.0/16', owner: 'DIGITALOCEAN', kind: 'hosting' },
  { cidr: '167.99.0.0/16', owner: 'DIGITALOCEAN', kind: 'hosting' },
  { cidr: '45.33.0.0/17', owner: 'LINODE', kind: 'hosting' },
  { cidr: '139.162.0.0/16', owner: 'LINODE', kind: 'hosting' },
  { cidr: '2a01:7e00::/32', owner: 'LINODE', kind: 'hosting' },
  { cidr: '45.32.0.0/16', owner: 'VULTR', kind: 'hosting' },
  { cidr: '45.76.0.0/16', owner: 'VULTR', kind: 'hosting' },
  { cidr: '3.0.0.0/9', owner: 'AWS', kind: 'hosting' },
  { cidr: '52.0.0.0/11', owner: 'AWS', kind: 'hosting' },
  { cidr: '2600:1f00::/24', owner: 'AWS', kind: 'hosting' },
  { cidr: '34.64.0.0/10', owner: 'GCP', kind: 'hosting' },
  { cidr: '35.184.0.0/13', owner: 'GCP', kind: 'hosting' },
  { cidr: '40.64.0.0/10', owner: 'AZURE', kind: 'hosting' },
  { cidr: '146.70.0.0/16', owner: 'M247', kind: 'hosting' },
  { cidr: '89.187.160.0/19', owner: 'DATACAMP', kind: 'hosting' },
  { cidr: '5.79.64.0/18', owner: 'LEASEWEB', kind: 'hosting' },
  { cidr: '2a02:c207::/32', owner: 'CONTABO', kind: 'hosting' },
  { cidr: '118.25.0.0/16', owner: 'TENCENT', kind: 'hosting' },
  // Enterprise security egress (what ENTERPRISE_VPN users come out of).
  { cidr: '165.225.0.0/17', owner: 'ZSCALER', kind: 'enterprise' },
  { cidr: '136.226.0.0/16', owner: 'ZSCALER', kind: 'enterprise' },
  { cidr: '163.116.128.0/17', owner: 'NETSKOPE', kind: 'enterprise' },
  { cidr: '146.112.0.0/16', owner: 'CISCO_UMBRELLA', kind: 'enterprise' },
  // iCloud Private Relay egress operators.
  { cidr: '104.28.0.0/16', owner: 'CLOUDFLARE', kind: 'relay' },
  { cidr: '172.224.0.0/12', owner: 'AKAMAI', kind: 'relay' },
  { cidr: '2a02:26f7::/32', owner: 'AKAMAI', kind: 'relay' },
  // Well-known Tor exit operators.
  { cidr: '185.220.100.0/22', owner: 'TOR_EXITS_DE', kind: 'tor' },
  { cidr: '192.42.116.0/24', owner: 'TOR_EXITS_NL', kind: 'tor' },
  // Internet-wide scanners and abuse-heavy hosts seen at every honeypot.
  { cidr: '162.142.125.0/24', owner: 'CENSYS', kind: 'scanner' },
  { cidr: '167.94.138.0/24', owner: 'CENSYS', kind: 'scanner' },
  { cidr: '198.235.24.0/24', owner: 'PALOALTO_EXPANSE', kind: 'scanner' },
  { cidr: '205.210.31.0/24', owner: 'PALOALTO_EXPANSE', kind: 'scanner' },
  { cidr: '184.105.139.0/24', owner: 'SHADOWSERVER', kind: 'scanner' },
  { cidr: '87.236.176.0/24', owner: 'DRIFTNET', kind: 'scanner' },
  { cidr: '80.82.77.0/24', owner: 'IP_VOLUME', kind: 'scanner' },
  { cidr: '185.242.226.0/24', owner: 'IP_VOLUME', kind: 'scanner' },
  { cidr: '45.148.10.0/24', owner: 'TECHOFF', kind: 'scanner' },
  { cidr: '141.98.11.0/24', owner: 'HOST_BALTIC', kind: 'scanner' },
  { cidr: '218.92.0.0/16', owner: 'CHINANET_JIANGSU', kind: 'scanner' },
  { cidr: '183.136.225.0/24', owner: 'CHINANET_ZHEJIANG', kind: 'scanner' },
  // Verified crawlers and public resolvers.
  { cidr: '66.249.64.0/19', owner: 'GOOGLEBOT', kind: 'crawler' },
  { cidr: '172.253.0.0/16', owner: 'GOOGLE_DNS', kind: 'resolver' },
  { cidr: '74.125.0.0/16', owner: 'GOOGLE_DNS', kind: 'resolver' },
  { cidr: '162.158.0.0/15', owner: 'CLOUDFLARE_DNS', kind: 'resolver' },
];

/** CIDRs of a kind, optionally only those of some owners. */
export function cidrsOf(kinds: SpaceKind | readonly SpaceKind[], owners?: readonly string[]): string[] {
  const set: readonly SpaceKind[] = typeof kinds === 'string' ? [kinds] : kinds;
  return PREFIXES.filter((p) => set.includes(p.kind) && (!owners || owners.includes(p.owner))).map((p) => p.cidr);
}

/** IPv4 blocks get three times the weight of IPv6 ones: most proxy and scanner traffic is still v4. */
export function cidrWeights(cidrs: readonly string[]): Array<readonly [string, number]> {
  return cidrs.map((c) => [c, c.includes(':') ? 1 : 3] as const);
}
