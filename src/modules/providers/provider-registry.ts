/**
 * One tag per provider. Sensors and feeds name the same provider in several ways: with the product
 * line appended (SMARTPROXY_MOBILE, INFATICA_RESIDENTIAL), with another spelling (BRIGHT_DATA,
 * PROTON_VPN) or by a former name (LUMINATI, now Bright Data; DECODO is Smartproxy's new name). Ingestion
 * maps every provider tag through this registry so a lookup lists the provider once; the product line
 * is a property of the sighting (the `variant` member of a feed record), not a second provider.
 */

/** Product lines a provider tag may carry as a suffix. */
export const VARIANTS = ['RESIDENTIAL', 'MOBILE', 'DATACENTER', 'ISP', 'PUBLIC', 'BLOCKCHAIN'] as const;
export type Variant = (typeof VARIANTS)[number];

/** Canonical tags of known providers, each with its other names. */
const PROVIDERS: Readonly<Record<string, readonly string[]>> = {
  // Proxy networks.
  BRIGHTDATA: ['BRIGHT_DATA', 'LUMINATI'],
  OXYLABS: [],
  SMARTPROXY: ['DECODO'],
  IPROYAL: [],
  SOAX: [],
  NETNUT: [],
  PROXYJET: [],
  PACKETSTREAM: [],
  HONEYGAIN: [],
  PROXYRACK: [],
  WEBSHARE: [],
  INFATICA: [],
  PROXY_SELLER: ['PROXYSELLER'],
  PAWNS: [],
  MYSTERIUM: ['MYSTERIUM_NETWORK'],
  GRASS: [],
  PROXYSCRAPE: [],
  GEONODE: ['GEONODE_FREE'],
  // VPN, relay and Tor operators.
  NORDVPN: ['NORD_VPN'],
  EXPRESSVPN: ['EXPRESS_VPN'],
  SURFSHARK: [],
  PROTONVPN: ['PROTON_VPN'],
  MULLVAD: ['MULLVAD_VPN'],
  PIA: ['PRIVATE_INTERNET_ACCESS'],
  CYBERGHOST: ['CYBERGHOST_VPN'],
  IPVANISH: [],
  HIDEMYASS: ['HMA'],
  WINDSCRIBE: [],
  TUNNELBEAR: [],
  HOTSPOTSHIELD: ['HOTSPOT_SHIELD'],
  URBANVPN: ['URBAN_VPN'],
  HIDE_ME: ['HIDEME'],
  ZSCALER: [],
  NETSKOPE: [],
  CISCO_UMBRELLA: ['UMBRELLA'],
  APPLE_PRIVATE_RELAY: ['ICLOUD_PRIVATE_RELAY'],
  TOR: ['TOR_PROJECT'],
};

/** Separators do not tell providers apart: BRIGHT-DATA, BRIGHT_DATA and BRIGHTDATA are one. */
const squash = (tag: string) => tag.replace(/[-_.]/g, '');

const BY_NAME = new Map<string, string>();
for (const [tag, aliases] of Object.entries(PROVIDERS)) for (const name of [tag, ...aliases]) BY_NAME.set(squash(name), tag);

const SUFFIX = new RegExp(`^(.+)[-_.](${VARIANTS.join('|')})$`);

export interface CanonicalProvider {
  provider: string;
  /** The product line the tag named (SMARTPROXY_MOBILE → MOBILE); absent when it named none. */
  variant?: Variant;
}

const cache = new Map<string, CanonicalProvider>();
const CACHE_MAX = 4096;

/**
 * The canonical tag of a provider tag: a known provider's own tag, with the product line named by a
 * suffix split off as its variant; an unknown tag as it is, upper-cased (a suffix is kept there, since
 * umbra cannot tell a product line from part of an unknown name).
 */
export function canonicalProvider(tag: string): CanonicalProvider {
  const hit = cache.get(tag);
  if (hit) return hit;
  const upper = tag.trim().toUpperCase();
  let out: CanonicalProvider = { provider: upper };
  const known = BY_NAME.get(squash(upper));
  if (known) out = { provider: known };
  else {
    const m = SUFFIX.exec(upper);
    const stem = m && BY_NAME.get(squash(m[1]!));
    if (m && stem) out = { provider: stem, variant: m[2] as Variant };
  }
  // Feeds name a few hundred providers at most; the bound only guards against a flood of made-up tags.
  if (cache.size < CACHE_MAX) cache.set(tag, out);
  return out;
}

/** Every canonical tag the registry knows. */
export const KNOWN_PROVIDERS: readonly string[] = Object.keys(PROVIDERS);
