import type { ParsedIp } from '../../lib/ip-address.ts';
import { freezeWithJson } from '../../lib/record-json.ts';
import type { NetworkType, NetworkTypeEvidence } from './ip-dataset.ts';

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
  /**
   * `orgId`: the caller's team, whose overlays (if any) apply to this lookup only. `networkType`: the
   * address's network.type, the risk score's prior (docs/intelligence.md, "Risk score").
   */
  intelligence(ip: ParsedIp, orgId?: string, networkType?: NetworkType): Intelligence;
}

// Carries its JSON (lib/record-json.ts), as do the prior-only answers made from it (intel-compose.ts).
export const NO_INTELLIGENCE: Intelligence = freezeWithJson({
  risk_score: 0,
  behavior: Object.freeze([]) as unknown as string[],
  categories: Object.freeze([]) as unknown as string[],
  devices: Object.freeze([]) as unknown as Device[],
  providers: Object.freeze([]) as unknown as ProviderSighting[],
}) as Intelligence;

/** The source before any feed or list has been imported: nothing is known, so nothing is claimed. */
export const emptyIntelligence: IntelligenceSource = { intelligence: () => NO_INTELLIGENCE };

/** Where one signal comes from: a feed (with its observations in the window) or an imported list. */
export type EvidenceSource =
  /** `simulated`: only present (true) when umbra's demo simulator made the records up. */
  | { source: 'feed'; feed: string; first_seen: number; last_seen: number; count: number; simulated?: true }
  | {
      source: 'list';
      kind: string;
      provider: string;
      version: string;
      format: string;
      imported_at: number;
      /** The publisher's time of the list (first_seen and last_seen are this time), and where it comes from. */
      published_at: number;
      published_from: 'content' | 'option' | 'file-date' | 'import';
      /** The list's age by its kind's rule: current (full strength) or stale (weaker); expired lists are left out. */
      state: 'current' | 'stale';
      /** 0 to 1, two decimals: the factor the membership carries into risk_score. */
      strength: number;
      first_seen: number;
      last_seen: number;
      count: number;
    }
  | { source: 'overlay'; action: 'allow' | 'deny'; cidr: string; created_at: number };

/** Where an answer's network.type came from, with the type it gave. */
export type NetworkEvidence = NetworkTypeEvidence & { type: NetworkType };

/** `?explain=true`: why the intelligence says what it says (a top-level member of the IP result). */
export interface Evidence {
  /** Set by the lookup, which knows the network (intelligence sources do not). */
  network?: NetworkEvidence;
  categories: Array<{ category: string; sources: EvidenceSource[] }>;
  providers: Array<{ provider: string; type: string; sources: EvidenceSource[] }>;
  behavior: Array<{ behavior: string; sources: EvidenceSource[] }>;
  devices: Array<{ os: string; version: string; sources: EvidenceSource[] }>;
  /** The parts of the risk score (docs/intelligence.md, "Risk score"). */
  risk: {
    score: number;
    prior: { value: number; from: string | null };
    category: { value: number; from: string | null };
    behavior: { value: number; from: string | null };
    volume: { value: number; observations: number };
    diversity: { value: number; behaviors: number };
    shared: { value: number; from: string | null };
    evidence: number;
    benign_cap: boolean;
  };
}

/** A source that can also say why (IntelIndex); lookups with explain=true use it when present. */
export interface ExplainingIntelligenceSource extends IntelligenceSource {
  explain(ip: ParsedIp, orgId?: string, networkType?: NetworkType): { intelligence: Intelligence; evidence: Evidence };
}

export const isExplaining = (s: IntelligenceSource): s is ExplainingIntelligenceSource =>
  typeof (s as Partial<ExplainingIntelligenceSource>).explain === 'function';
