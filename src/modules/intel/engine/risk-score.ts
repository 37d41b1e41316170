/**
 * risk_score: a summary from 0 to 100, not a verdict. Pure; docs/intelligence.md has the same formula
 * and the worked examples that risk-score.test.ts checks.
 *
 *   category  = max over categories of WEIGHT[c] × recency(last_seen)      (list membership: its list's strength)
 *   behavior  = max over behaviours of WEIGHT[b] × recency(last_seen)
 *   base      = max(category, behavior) + 0.25 × min(category, behavior)   (both kinds of evidence add up)
 *   volume    = min(15, 5 × log10(1 + n)) when behavior > 0, n = observations behind the behaviours
 *   recency(t)= 0.5 ^ (age_days / 30)                                      (half-life 30 days, ≥ 0)
 *   score     = round(clamp(base + volume, 0, 100))
 *
 * Verified benign services (search engines, AI crawlers, uptime monitors ...) crawl and use HTTP
 * libraries by design, so for an address in a benign class PROGRAMMATIC_TRAFFIC and ACTIVE_CRAWLER
 * weigh nothing; and without abusive behaviour its score is capped at BENIGN_CAP.
 */
export const CATEGORY_WEIGHT: Record<string, number> = {
  BOTNET: 80,
  TOR_NODE: 60,
  PUBLIC_PROXY: 55,
  RESIDENTIAL_PROXY: 45,
  BLOCKCHAIN_PROXY: 45,
  MOBILE_PROXY: 40,
  DATACENTER_PROXY: 40,
  FREE_VPN: 35,
  COMMERCIAL_VPN: 25,
  ENTERPRISE_VPN: 10,
  PRIVATE_RELAY: 10,
};

export const BEHAVIOR_WEIGHT: Record<string, number> = {
  COMPROMISED_DEVICE: 85,
  MALICIOUS_TRAFFIC: 80,
  CREDENTIAL_STUFFING: 75,
  ACTIVE_CRAWLER: 30,
  PROGRAMMATIC_TRAFFIC: 20,
  TOR_USER: 15,
  TORRENTING: 10,
};

export const BENIGN_CATEGORIES: ReadonlySet<string> = new Set([
  'SEARCH_ENGINE',
  'AI_CRAWLER',
  'SOCIAL_MEDIA',
  'UPTIME_MONITOR',
  'LINK_PREVIEW',
  'SEO_CRAWLER',
  'WEB_ARCHIVER',
  'WEBHOOK_PROVIDER',
  'PAYMENT_PROCESSOR',
]);
const ABUSIVE: ReadonlySet<string> = new Set(['COMPROMISED_DEVICE', 'MALICIOUS_TRAFFIC', 'CREDENTIAL_STUFFING']);
const AUTOMATION: ReadonlySet<string> = new Set(['PROGRAMMATIC_TRAFFIC', 'ACTIVE_CRAWLER']);
export const BENIGN_CAP = 5;
const HALF_LIFE_DAYS = 30;
const DAY_S = 86_400;

export interface RiskSignal {
  value: string;
  /** Unix seconds of the latest feed observation; undefined when only lists or overlays say so. */
  last_seen: number | undefined;
  /**
   * 0 to 1: the age factor of list membership, by the list kind's own aging rule (list-aging.ts);
   * the signal counts with the larger of it and recency(last_seen). Undefined when no list says so.
   */
  strength?: number;
  /** Observations behind a behaviour (ignored for categories). */
  count: number;
}

export interface RiskParts {
  score: number;
  category: { value: number; from: string | null };
  behavior: { value: number; from: string | null };
  volume: { value: number; observations: number };
  /** True when the benign-service cap applied. */
  benign_cap: boolean;
}

export function recency(lastSeen: number | undefined, nowS: number): number {
  if (lastSeen === undefined) return 1;
  const ageDays = Math.max(0, nowS - lastSeen) / DAY_S;
  return 0.5 ** (ageDays / HALF_LIFE_DAYS);
}

/** A signal's age factor: its lists' strength or its feeds' recency, whichever is larger; 1 for an overlay alone. */
export function signalFactor(s: RiskSignal, nowS: number): number {
  if (s.last_seen === undefined) return s.strength ?? 1;
  return Math.max(s.strength ?? 0, recency(s.last_seen, nowS));
}

const round2 = (x: number) => Math.round(x * 100) / 100;

export function riskScore(categories: readonly RiskSignal[], behaviors: readonly RiskSignal[], nowS: number): RiskParts {
  const benign = categories.some((c) => BENIGN_CATEGORIES.has(c.value));
  let cat = 0;
  let catFrom: string | null = null;
  for (const c of categories) {
    const w = (CATEGORY_WEIGHT[c.value] ?? 0) * signalFactor(c, nowS);
    if (w > cat) [cat, catFrom] = [w, c.value];
  }
  let beh = 0;
  let behFrom: string | null = null;
  let observations = 0;
  let abusive = false;
  for (const b of behaviors) {
    if (benign && AUTOMATION.has(b.value)) continue;
    const w = (BEHAVIOR_WEIGHT[b.value] ?? 0) * signalFactor(b, nowS);
    if (w <= 0) continue;
    observations += b.count;
    if (ABUSIVE.has(b.value)) abusive = true;
    if (w > beh) [beh, behFrom] = [w, b.value];
  }
  const volume = beh > 0 ? Math.min(15, 5 * Math.log10(1 + observations)) : 0;
  let score = Math.round(Math.min(100, Math.max(0, Math.max(cat, beh) + 0.25 * Math.min(cat, beh) + volume)));
  const capped = benign && !abusive && score > BENIGN_CAP;
  if (capped) score = BENIGN_CAP;
  return {
    score,
    category: { value: round2(cat), from: catFrom },
    behavior: { value: round2(beh), from: behFrom },
    volume: { value: round2(volume), observations },
    benign_cap: capped,
  };
}
