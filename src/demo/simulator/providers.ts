import type { SpaceKind } from './address-space.ts';

export type ProxyType = 'RESIDENTIAL_PROXY' | 'MOBILE_PROXY' | 'DATACENTER_PROXY' | 'PUBLIC_PROXY' | 'BLOCKCHAIN_PROXY';
export type AnonymizerType = 'COMMERCIAL_VPN' | 'FREE_VPN' | 'ENTERPRISE_VPN' | 'PRIVATE_RELAY' | 'TOR_NODE';

export interface ProxyProvider {
  tag: string;
  /** Relative share of the proxies feed (roughly pool size in the market). */
  weight: number;
  types: readonly ProxyType[];
}

/** Proxy networks and the products each actually sells. */
export const PROXY_PROVIDERS: readonly ProxyProvider[] = [
  { tag: 'BRIGHTDATA', weight: 14, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'OXYLABS', weight: 11, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'SMARTPROXY', weight: 9, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'IPROYAL', weight: 8, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'SOAX', weight: 6, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY'] },
  { tag: 'NETNUT', weight: 6, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'PROXYJET', weight: 4, types: ['RESIDENTIAL_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'PACKETSTREAM', weight: 4, types: ['RESIDENTIAL_PROXY'] },
  { tag: 'HONEYGAIN', weight: 5, types: ['RESIDENTIAL_PROXY'] },
  { tag: 'PROXYRACK', weight: 3, types: ['RESIDENTIAL_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'WEBSHARE', weight: 6, types: ['DATACENTER_PROXY', 'RESIDENTIAL_PROXY'] },
  { tag: 'INFATICA', weight: 3, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY'] },
  { tag: 'PROXY_SELLER', weight: 3, types: ['DATACENTER_PROXY', 'MOBILE_PROXY'] },
  { tag: 'PAWNS', weight: 2, types: ['RESIDENTIAL_PROXY'] },
  { tag: 'MYSTERIUM', weight: 2, types: ['BLOCKCHAIN_PROXY'] },
  { tag: 'GRASS', weight: 2, types: ['BLOCKCHAIN_PROXY'] },
  { tag: 'PROXYSCRAPE', weight: 2, types: ['PUBLIC_PROXY'] },
  { tag: 'GEONODE_FREE', weight: 1, types: ['PUBLIC_PROXY'] },
];

/** Where each proxy type's exits live; blockchain nodes are mostly volunteers at home. */
export const PROXY_SPACE: Record<ProxyType, ReadonlyArray<readonly [SpaceKind, number]>> = {
  RESIDENTIAL_PROXY: [['residential', 1]],
  MOBILE_PROXY: [['mobile', 1]],
  DATACENTER_PROXY: [['hosting', 1]],
  PUBLIC_PROXY: [
    ['hosting', 3],
    ['residential', 2],
  ],
  BLOCKCHAIN_PROXY: [
    ['residential', 7],
    ['hosting', 3],
  ],
};

export interface VpnProvider {
  tag: string;
  weight: number;
  type: AnonymizerType;
  kinds: readonly SpaceKind[];
  /** Owners (address-space.ts) whose blocks the provider rents; all blocks of the kinds when absent. */
  owners?: readonly string[];
}

export const VPN_PROVIDERS: readonly VpnProvider[] = [
  { tag: 'NORDVPN', weight: 12, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP', 'LEASEWEB'] },
  { tag: 'EXPRESSVPN', weight: 9, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP', 'LEASEWEB', 'LINODE'] },
  { tag: 'SURFSHARK', weight: 8, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP'] },
  { tag: 'PROTONVPN', weight: 7, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP', 'LEASEWEB'] },
  { tag: 'MULLVAD', weight: 5, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'HETZNER', 'DATACAMP'] },
  { tag: 'PIA', weight: 6, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP', 'LEASEWEB'] },
  { tag: 'CYBERGHOST', weight: 5, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP'] },
  { tag: 'IPVANISH', weight: 3, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['LEASEWEB', 'M247'] },
  { tag: 'HIDEMYASS', weight: 2, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['DATACAMP', 'LEASEWEB'] },
  { tag: 'WINDSCRIBE', weight: 4, type: 'FREE_VPN', kinds: ['hosting'], owners: ['VULTR', 'OVH', 'DIGITALOCEAN'] },
  { tag: 'TUNNELBEAR', weight: 3, type: 'FREE_VPN', kinds: ['hosting'], owners: ['DIGITALOCEAN', 'LINODE', 'AWS'] },
  { tag: 'HOTSPOTSHIELD', weight: 3, type: 'FREE_VPN', kinds: ['hosting'], owners: ['DATACAMP', 'OVH'] },
  { tag: 'URBANVPN', weight: 2, type: 'FREE_VPN', kinds: ['hosting'], owners: ['OVH', 'HETZNER'] },
  { tag: 'HIDE_ME', weight: 1, type: 'FREE_VPN', kinds: ['hosting'], owners: ['LEASEWEB', 'M247'] },
  { tag: 'ZSCALER', weight: 5, type: 'ENTERPRISE_VPN', kinds: ['enterprise'], owners: ['ZSCALER'] },
  { tag: 'NETSKOPE', weight: 2, type: 'ENTERPRISE_VPN', kinds: ['enterprise'], owners: ['NETSKOPE'] },
  { tag: 'CISCO_UMBRELLA', weight: 2, type: 'ENTERPRISE_VPN', kinds: ['enterprise'], owners: ['CISCO_UMBRELLA'] },
  { tag: 'APPLE_PRIVATE_RELAY', weight: 8, type: 'PRIVATE_RELAY', kinds: ['relay'] },
  // Most exits sit on a few dedicated operators' blocks; the rest on cheap European hosting.
  {
    tag: 'TOR',
    weight: 6,
    type: 'TOR_NODE',
    kinds: ['tor', 'hosting'],
    owners: ['TOR_EXITS_DE', 'TOR_EXITS_NL', 'HETZNER', 'OVH', 'M247'],
  },
];
