import type { ParsedIp } from './ip-address.ts';

export interface Device {
  os: string;
  version: string;
  /** Unix seconds. */
  last_seen: number;
}

export interface ProviderSighting {
  provider: string;
  type: string;
  /** Unix seconds. */
  last_seen: number;
}

export interface Intelligence {
  /** 0..100. */
  risk_score: number;
  behavior: string[];
  categories: string[];
  devices: Device[];
  providers: ProviderSighting[];
}

/** What umbra knows about an address beyond ownership and location. */
export interface IntelligenceSource {
  intelligence(ip: ParsedIp): Intelligence;
}

export const NO_INTELLIGENCE: Intelligence = Object.freeze({
  risk_score: 0,
  behavior: Object.freeze([]) as unknown as string[],
  categories: Object.freeze([]) as unknown as string[],
  devices: Object.freeze([]) as unknown as Device[],
  providers: Object.freeze([]) as unknown as ProviderSighting[],
}) as Intelligence;

/** The source before any feed or list has been imported: nothing is known, so nothing is claimed. */
export const emptyIntelligence: IntelligenceSource = { intelligence: () => NO_INTELLIGENCE };
