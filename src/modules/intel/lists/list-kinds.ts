import { NETWORK_TYPES } from '../../dataset/network-type.ts';

/** The contract's category values: lists that flag addresses (intelligence.categories and providers[].type). */
export const CATEGORY_KINDS = [
  'FREE_VPN',
  'COMMERCIAL_VPN',
  'ENTERPRISE_VPN',
  'MOBILE_PROXY',
  'BLOCKCHAIN_PROXY',
  'RESIDENTIAL_PROXY',
  'PUBLIC_PROXY',
  'DATACENTER_PROXY',
  'TOR_NODE',
  'PRIVATE_RELAY',
  'BOTNET',
  'SEARCH_ENGINE',
  'AI_CRAWLER',
  'SOCIAL_MEDIA',
  'UPTIME_MONITOR',
  'LINK_PREVIEW',
  'SEO_CRAWLER',
  'WEB_ARCHIVER',
  'WEBHOOK_PROVIDER',
  'PAYMENT_PROCESSOR',
] as const;

/** The contract's network.type values: lists that classify networks (a cloud's ranges as DATACENTER) and override network.type. */
export const NETWORK_KINDS = NETWORK_TYPES.filter((t) => t !== 'UNKNOWN');

export const LIST_KINDS: readonly string[] = [...CATEGORY_KINDS, ...NETWORK_KINDS];

const TAG = /^[A-Z0-9_]{1,64}$/;

/** The provider tag's form, for error messages. */
export const PROVIDER_TAG_RULE = '1 to 64 letters, digits, - or _ (read upper case, - as _), such as TOR or APPLE_PRIVATE_RELAY';

/** `tor-node`, `Tor_Node` → `TOR_NODE`; undefined when it is not a list kind. */
export function listKind(input: string): string | undefined {
  const k = input.trim().toUpperCase().replaceAll('-', '_');
  return LIST_KINDS.includes(k) ? k : undefined;
}

export const isNetworkKind = (kind: string): boolean => (NETWORK_KINDS as readonly string[]).includes(kind);

/** `apple-private-relay` → `APPLE_PRIVATE_RELAY`; undefined unless 1..64 of A-Z, 0-9 and _ remain (tags become file names). */
export function providerTag(input: string): string | undefined {
  const t = input.trim().toUpperCase().replaceAll('-', '_');
  return TAG.test(t) ? t : undefined;
}
