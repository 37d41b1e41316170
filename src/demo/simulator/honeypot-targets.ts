import { cidrsOf } from './address-space.ts';
import { addressIn } from './ip-space.ts';
import { seedFrom, stableRng } from './random.ts';

/**
 * The simulated Helios fleet: honeypot hostnames (hottest first; traffic falls off Zipf-like) and the
 * tunnels that expose them. Names are invented but shaped like the leaked or guessable hosts that real
 * honeypots impersonate: VPN portals, webmail, CI, NAS boxes and forgotten staging sites.
 */
export const HONEYPOT_HOSTS: readonly string[] = [
  'vpn.northwind-bank.com',
  'mail.acme-logistics.com',
  'dev.example-shop.io',
  'acme-logistics.com',
  'owa.fairmont-insurance.com',
  'jenkins.corvid-labs.dev',
  'example-shop.io',
  'remote.fairmont-insurance.com',
  'nas.kestrel-home.net',
  'wp.saltmarsh-coffee.com',
  'git.corvid-labs.dev',
  'citrix.meridian-freight.com',
  'api.example-shop.io',
  'northwind-bank.com',
  'grafana.tessera-analytics.io',
  'webmail.hollis-law.co.uk',
  'cam01.kestrel-home.net',
  'portal.brightpath-health.org',
  'staging.brightpath-health.org',
  'saltmarsh-coffee.com',
  'router.kestrel-home.net',
  'kibana.tessera-analytics.io',
  'sso.meridian-freight.com',
  'api.pinecrest-pay.com',
  'shop.lumen-outdoor.de',
  'moodle.riverbend-schools.org',
  'corvid-labs.dev',
  'vpn.verdant-energy.co',
  'admin.riverbend-schools.org',
  'cloud.tessera-analytics.io',
  'hollis-law.co.uk',
  'pinecrest-pay.com',
  'blog.saltmarsh-coffee.com',
  'files.orchid-design.studio',
  'crm.verdant-energy.co',
  'lumen-outdoor.de',
  'ftp.oldmill-printing.com',
  'intranet.granite-civil.com.au',
  'mx1.granite-civil.com.au',
  'test.quokka-apps.app',
];

const TWO_LABEL_SUFFIXES = new Set(['co.uk', 'com.au', 'org.uk', 'co.jp']);

/** The registered domain (zone) of a host: what a DNS honeypot is authoritative for. */
export function zoneOf(host: string): string {
  const labels = host.split('.');
  const keep = TWO_LABEL_SUFFIXES.has(labels.slice(-2).join('.')) ? 3 : 2;
  return labels.slice(-keep).join('.');
}

export const HONEYPOT_ZONES: readonly string[] = [...new Set(HONEYPOT_HOSTS.map(zoneOf))];

export interface Tunnel {
  tunnel_id: number;
  /** The honeypot's own front proxy, not the attacker. */
  proxy_ip: string;
  server: string;
  pool_id: string;
  provider: string;
}

const TUNNEL_SITES: ReadonlyArray<readonly [string, string, string]> = [
  ['helio-fsn1-01', 'eu-central', 'HETZNER'],
  ['helio-hel1-02', 'eu-north', 'HETZNER'],
  ['helio-gra-01', 'eu-west', 'OVH'],
  ['helio-bhs-03', 'ca-east', 'OVH'],
  ['helio-nyc3-01', 'us-east', 'DIGITALOCEAN'],
  ['helio-sfo3-02', 'us-west', 'DIGITALOCEAN'],
  ['helio-fra-04', 'eu-central', 'VULTR'],
  ['helio-sgp-01', 'ap-southeast', 'LINODE'],
  ['helio-use1-05', 'us-east', 'AWS'],
  ['helio-tyo-01', 'ap-northeast', 'GCP'],
];

/** Fixed for every run: tunnel ids, proxies and sites are infrastructure, not traffic. */
export const TUNNELS: readonly Tunnel[] = TUNNEL_SITES.map(([server, pool, provider], i) => {
  const r = stableRng(`tunnel:${server}`);
  const v4 = cidrsOf('hosting', [provider]).filter((c) => !c.includes(':'));
  return { tunnel_id: 4101 + i * 7, proxy_ip: addressIn(r, v4[Math.floor(r() * v4.length)]!), server, pool_id: pool, provider };
});

/** Each host is exposed through one tunnel, chosen by a hash of its name. */
export function tunnelFor(host: string): Tunnel {
  return TUNNELS[seedFrom(host) % TUNNELS.length]!;
}

export function metaOf(t: Tunnel): { proxy_ip: string; server: string; pool_id: string; provider: string } {
  return { proxy_ip: t.proxy_ip, server: t.server, pool_id: t.pool_id, provider: t.provider };
}

export const HTTP_PORTS = [
  [80, 60],
  [8080, 15],
  [8000, 8],
  [8888, 6],
  [3000, 5],
  [5000, 6],
] as const;
export const HTTPS_PORTS = [
  [443, 75],
  [8443, 15],
  [4443, 5],
  [9443, 5],
] as const;
export const DNS_PORTS = [
  [53, 85],
  [853, 8],
  [5353, 7],
] as const;
