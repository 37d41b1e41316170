import type { IntelList } from './intel-list.ts';

/**
 * How long a list's membership stays true, per kind. A list is a snapshot of its publisher's state at
 * `published_at`: it counts at full strength while younger than `fresh_days`, then its strength halves
 * every `half_life_days`, and from `expire_days` on it says nothing at all. The periods follow how fast
 * each kind of membership changes: Tor exits come and go within days (the Tor Project regenerates its
 * list hourly), public proxies and bot hosts within days to weeks, proxy pools within weeks, VPN server
 * fleets within months, and the published ranges of crawlers, services and clouds within a year.
 */
export interface AgingRule {
  fresh_days: number;
  half_life_days: number;
  expire_days: number;
}

const FAST: AgingRule = { fresh_days: 2, half_life_days: 3, expire_days: 30 };
const POOL: AgingRule = { fresh_days: 7, half_life_days: 7, expire_days: 60 };
const FLEET: AgingRule = { fresh_days: 30, half_life_days: 30, expire_days: 180 };
const PUBLISHED_RANGES: AgingRule = { fresh_days: 90, half_life_days: 90, expire_days: 730 };

export const AGING_RULES: Readonly<Record<string, AgingRule>> = {
  TOR_NODE: { fresh_days: 1, half_life_days: 2, expire_days: 14 },
  PUBLIC_PROXY: FAST,
  BOTNET: FAST,
  RESIDENTIAL_PROXY: POOL,
  MOBILE_PROXY: POOL,
  DATACENTER_PROXY: POOL,
  BLOCKCHAIN_PROXY: POOL,
  FREE_VPN: FLEET,
  COMMERCIAL_VPN: FLEET,
  ENTERPRISE_VPN: FLEET,
  PRIVATE_RELAY: FLEET,
};

/** Kinds without their own rule: crawler, service and webhook ranges, and the network-type (cloud) lists. */
export const DEFAULT_AGING: AgingRule = PUBLISHED_RANGES;

export const agingRule = (kind: string): AgingRule => AGING_RULES[kind] ?? DEFAULT_AGING;

/** current: full strength; stale: counts, weaker with age; expired: counts no more. */
export type ListState = 'current' | 'stale' | 'expired';

export interface ListAge {
  /** Days since the publisher's time (0 when it lies ahead of the clock). */
  age_days: number;
  state: ListState;
  /** 0 to 1: the factor the list's membership carries (risk_score uses it in place of recency). */
  strength: number;
}

const DAY_S = 86_400;

/** The age of a list at nowS (Unix seconds) by its kind's rule. */
export function listAge(list: Pick<IntelList, 'kind' | 'published_at'>, nowS: number): ListAge {
  const rule = agingRule(list.kind);
  const age = Math.max(0, nowS - list.published_at) / DAY_S;
  if (age >= rule.expire_days) return { age_days: age, state: 'expired', strength: 0 };
  if (age <= rule.fresh_days) return { age_days: age, state: 'current', strength: 1 };
  return { age_days: age, state: 'stale', strength: 0.5 ** ((age - rule.fresh_days) / rule.half_life_days) };
}
