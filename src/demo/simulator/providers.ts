import type { SpaceKind } from './address-space.ts';

export type ProxyType = 'RESIDENTIAL_PROXY' | 'MOBILE_PROXY' | 'DATACENTER_PROXY' | 'PUBLIC_PROXY' | 'BLOCKCHAIN_PROXY';
export type AnonymizerType = 'COMMERCIAL_VPN' | 'FREE_VPN' | 'ENTERPRISE_VPN' | 'PRIVATE_RELAY' | 'TOR_NODE';

export interface ProxyProvider {
  tag: string;
  /** Relative share of the proxies feed (roughly pool size in the market). */
  weight: number;
  types: readonly ProxyType[];
}

/**
 * Made-up proxy networks, each with a product mix like a real one's. The demo draws its addresses
 * from real networks (address-space.ts) that no proxy or VPN provider publishes as its own, so it
 * never puts a real provider's name on them: every tag is DEMO_..., and every record the simulator
 * makes is stored with `simulated: true` (ingest-service.ts), which the evidence reports.
 */
export const PROXY_PROVIDERS: readonly ProxyProvider[] = [
  { tag: 'DEMO_PROXY_A', weight: 14, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'DEMO_PROXY_B', weight: 11, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'DEMO_PROXY_C', weight: 9, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'DEMO_PROXY_D', weight: 8, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'DEMO_PROXY_E', weight: 6, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY'] },
  { tag: 'DEMO_PROXY_F', weight: 6, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'DEMO_PROXY_G', weight: 4, types: ['RESIDENTIAL_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'DEMO_PROXY_H', weight: 4, types: ['RESIDENTIAL_PROXY'] },
  { tag: 'DEMO_PROXY_I', weight: 5, types: ['RESIDENTIAL_PROXY'] },
  { tag: 'DEMO_PROXY_J', weight: 3, types: ['RESIDENTIAL_PROXY', 'DATACENTER_PROXY'] },
  { tag: 'DEMO_PROXY_K', weight: 6, types: ['DATACENTER_PROXY', 'RESIDENTIAL_PROXY'] },
  { tag: 'DEMO_PROXY_L', weight: 3, types: ['RESIDENTIAL_PROXY', 'MOBILE_PROXY'] },
  { tag: 'DEMO_PROXY_M', weight: 3, types: ['DATACENTER_PROXY', 'MOBILE_PROXY'] },
  { tag: 'DEMO_PROXY_N', weight: 2, types: ['RESIDENTIAL_PROXY'] },
  { tag: 'DEMO_PROXY_O', weight: 2, types: ['BLOCKCHAIN_PROXY'] },
  { tag: 'DEMO_PROXY_P', weight: 2, types: ['BLOCKCHAIN_PROXY'] },
  { tag: 'DEMO_PROXY_Q', weight: 2, types: ['PUBLIC_PROXY'] },
  { tag: 'DEMO_PROXY_R', weight: 1, types: ['PUBLIC_PROXY'] },
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

/** Made-up VPN, relay and Tor operators (DEMO_...), on the kinds of network the real ones use. */
export const VPN_PROVIDERS: readonly VpnProvider[] = [
  { tag: 'DEMO_VPN_A', weight: 12, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP', 'LEASEWEB'] },
  { tag: 'DEMO_VPN_B', weight: 9, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP', 'LEASEWEB', 'LINODE'] },
  { tag: 'DEMO_VPN_C', weight: 8, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP'] },
  { tag: 'DEMO_VPN_D', weight: 7, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP', 'LEASEWEB'] },
  { tag: 'DEMO_VPN_E', weight: 5, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'HETZNER', 'DATACAMP'] },
  { tag: 'DEMO_VPN_F', weight: 6, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP', 'LEASEWEB'] },
  { tag: 'DEMO_VPN_G', weight: 5, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['M247', 'DATACAMP'] },
  { tag: 'DEMO_VPN_H', weight: 3, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['LEASEWEB', 'M247'] },
  { tag: 'DEMO_VPN_I', weight: 2, type: 'COMMERCIAL_VPN', kinds: ['hosting'], owners: ['DATACAMP', 'LEASEWEB'] },
  { tag: 'DEMO_FREE_VPN_A', weight: 4, type: 'FREE_VPN', kinds: ['hosting'], owners: ['VULTR', 'OVH', 'DIGITALOCEAN'] },
  { tag: 'DEMO_FREE_VPN_B', weight: 3, type: 'FREE_VPN', kinds: ['hosting'], owners: ['DIGITALOCEAN', 'LINODE', 'AWS'] },
  { tag: 'DEMO_FREE_VPN_C', weight: 3, type: 'FREE_VPN', kinds: ['hosting'], owners: ['DATACAMP', 'OVH'] },
  { tag: 'DEMO_FREE_VPN_D', weight: 2, type: 'FREE_VPN', kinds: ['hosting'], owners: ['OVH', 'HETZNER'] },
  { tag: 'DEMO_FREE_VPN_E', weight: 1, type: 'FREE_VPN', kinds: ['hosting'], owners: ['LEASEWEB', 'M247'] },
  { tag: 'DEMO_ENTERPRISE_VPN_A', weight: 5, type: 'ENTERPRISE_VPN', kinds: ['enterprise'], owners: ['ZSCALER'] },
  { tag: 'DEMO_ENTERPRISE_VPN_B', weight: 2, type: 'ENTERPRISE_VPN', kinds: ['enterprise'], owners: ['NETSKOPE'] },
  { tag: 'DEMO_ENTERPRISE_VPN_C', weight: 2, type: 'ENTERPRISE_VPN', kinds: ['enterprise'], owners: ['CISCO_UMBRELLA'] },
  { tag: 'DEMO_PRIVATE_RELAY', weight: 8, type: 'PRIVATE_RELAY', kinds: ['relay'] },
  // Most exits sit on a few dedicated operators' blocks; the rest on cheap European hosting.
  {
    tag: 'DEMO_TOR',
    weight: 6,
    type: 'TOR_NODE',
    kinds: ['tor', 'hosting'],
    owners: ['TOR_EXITS_DE', 'TOR_EXITS_NL', 'HETZNER', 'OVH', 'M247'],
  },
];
