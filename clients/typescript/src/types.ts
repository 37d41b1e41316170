import type { components, operations } from './generated/openapi.js';

/**
 * A generated type whose string enumerations stay open: the service adds values over time and a
 * client keeps the ones it does not know, so `"A" | "B"` becomes `"A" | "B" | (string & {})`, which
 * still autocompletes the known values.
 */
export type Opened<T> = T extends string
  ? string extends T
    ? string
    : T | (string & {})
  : T extends readonly (infer U)[]
    ? Opened<U>[]
    : T extends object
      ? { [K in keyof T]: Opened<T[K]> }
      : T;

/** A known value or any other string the service may add later. */
export type Open<Known extends string> = Known | (string & {});

export type NetworkType = Open<
  'MOBILE' | 'SATELLITE' | 'IN_FLIGHT_WIFI' | 'RESIDENTIAL' | 'CORPORATE' | 'ACADEMIC' | 'DATACENTER' | 'GOVERNMENT'
>;
export type Category = Open<
  | 'FREE_VPN'
  | 'COMMERCIAL_VPN'
  | 'ENTERPRISE_VPN'
  | 'MOBILE_PROXY'
  | 'BLOCKCHAIN_PROXY'
  | 'RESIDENTIAL_PROXY'
  | 'PUBLIC_PROXY'
  | 'DATACENTER_PROXY'
  | 'TOR_NODE'
  | 'PRIVATE_RELAY'
  | 'BOTNET'
  | 'SEARCH_ENGINE'
  | 'AI_CRAWLER'
  | 'SOCIAL_MEDIA'
  | 'UPTIME_MONITOR'
  | 'LINK_PREVIEW'
  | 'SEO_CRAWLER'
  | 'WEB_ARCHIVER'
  | 'WEBHOOK_PROVIDER'
  | 'PAYMENT_PROCESSOR'
>;
export type Behavior = Open<
  'PROGRAMMATIC_TRAFFIC' | 'ACTIVE_CRAWLER' | 'TORRENTING' | 'TOR_USER' | 'CREDENTIAL_STUFFING' | 'COMPROMISED_DEVICE' | 'MALICIOUS_TRAFFIC'
>;
export type DeviceOs = Open<'ANDROID' | 'IOS' | 'WINDOWS' | 'MACOS' | 'LINUX' | 'CHROME_OS' | 'SMART_TV' | 'GAME_CONSOLE' | 'OTHER'>;
export type Relation = Open<'OWNER' | 'ADMIN' | 'MEMBER'>;
export type DomainStatus = Open<'ok' | 'dormant' | 'unknown'>;

type GeneratedIp = Opened<components['schemas']['IpResult']>;
type Json<Op extends keyof operations> = operations[Op]['responses'] extends { 200: { content: { 'application/json': infer B } } }
  ? Opened<B>
  : never;

/** The answer of an IP lookup (also each element of a batch's `results`). */
export type IpResult = Omit<GeneratedIp, 'network' | 'intelligence'> & {
  network: Omit<GeneratedIp['network'], 'type'> & { type: NetworkType };
  intelligence: Omit<GeneratedIp['intelligence'], 'behavior' | 'categories' | 'devices' | 'providers'> & {
    behavior: Behavior[];
    categories: Category[];
    devices: Array<Omit<GeneratedIp['intelligence']['devices'][number], 'os'> & { os: DeviceOs }>;
    providers: Array<Omit<GeneratedIp['intelligence']['providers'][number], 'type'> & { type: Category }>;
  };
};

type GeneratedAccount = Json<'account.me'>;
export type AccountInfo = Omit<GeneratedAccount, 'organization'> & {
  organization: Omit<GeneratedAccount['organization'], 'relation'> & { relation: Relation };
};

type GeneratedDomain = Json<'lookup.domain'>;
export type DomainResult = Omit<GeneratedDomain, 'data'> & {
  data: Omit<GeneratedDomain['data'], 'status'> & { status: DomainStatus };
};

export type BatchResult = Omit<Json<'lookup.ips'>, 'results'> & { results: IpResult[] };
export type HealthStatus = Opened<{ status: string; version?: string; problems?: string[] }>;
export type Problem = components['schemas']['Problem'];
