/**
 * risk_score: a summary from 0 to 100, not a verdict. Pure; docs/intelligence.md ("Risk score") has
 * the same formula, why each part is there and the worked examples that risk-score.test.ts checks.
 *
 *   prior     = PRIOR[network.type]; 0 for a verified benign service or when the type is not known
 *   category  = max over categories of CATEGORY_WEIGHT[c] × recency(c)
 *   behavior  = max over behaviours of BEHAVIOR_WEIGHT[b] × recency(b)
 *   volume    = 0.55 + 0.45 × min(1, log10(1 + n) / 2)      n = requests behind the behaviours
 *   diversity = 1 + 0.15 × (min(k, 4) − 1)                  k = distinct behaviours that weigh
 *   shared    = 0.6 for a shared address (relay, VPN or proxy exit, Tor, mobile network, CGNAT), else 1
 *   evidence  = min(100, behavior × volume × diversity × shared)
 *   base      = max(category, evidence) + 0.25 × min(category, evidence)
 *   score     = round(clamp(prior + (1 − prior / 100) × base, 0, 100))
 *   recency   = 0.5 ^ (age_days / 30) of the latest feed observation; for list membership, the list's
 *               strength by its kind's aging rule (list-aging.ts), the larger of the two when both say so
 *
 * Verified benign services (search engines, AI crawlers, uptime monitors ...) crawl and use HTTP
 * libraries by design, so for an address in a benign class PROGRAMMATIC_TRAFFIC and ACTIVE_CRAWLER
 * weigh nothing, its prior is 0, and without abusive behaviour its score is capped at BENIGN_CAP.
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

/**
 * What the network alone says before anything is observed: servers in a datacenter send most
 * unsolicited traffic and rarely a person's browsing; an office, a campus, a home or a phone behind
 * carrier NAT is people. UNKNOWN (the dataset cannot say) and types not listed weigh nothing: nothing
 * is claimed that the data does not show.
 */
export const NETWORK_PRIOR: Record<string, number> = {
  DATACENTER: 15,
  CORPORATE: 6,
  ACADEMIC: 6,
  GOVERNMENT: 5,
  RESIDENTIAL: 5,
  SATELLITE: 4,
  IN_FLIGHT_WIFI: 4,
  MOBILE: 3,
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

/**
 * Categories whose address carries many people's traffic: what one of them did says less about the
 * next request from it, and blocking it blocks them all.
 */
export const SHARED_CATEGORIES: ReadonlySet<string> = new Set([
  'PRIVATE_RELAY',
  'TOR_NODE',
  'PUBLIC_PROXY',
  'RESIDENTIAL_PROXY',
  'BLOCKCHAIN_PROXY',
  'MOBILE_PROXY',
  'DATACENTER_PROXY',
  'FREE_VPN',
  'COMMERCIAL_VPN',
  'ENTERPRISE_VPN',
]);
/** Network types whose addresses are shared by design (carrier-grade NAT). */
export const SHARED_NETWORKS: ReadonlySet<string> = new Set(['MOBILE']);

const ABUSIVE: ReadonlySet<string> = new Set(['COMPROMISED_DEVICE', 'MALICIOUS_TRAFFIC', 'CREDENTIAL_STUFFING']);
const AUTOMATION: ReadonlySet<string> = new Set(['PROGRAMMATIC_TRAFFIC', 'ACTIVE_CRAWLER']);
export const BENIGN_CAP = 5;
export const SHARED_FACTOR = 0.6;
const HALF_LIFE_DAYS = 30;
const DAY_S = 86_400;
const VOLUME_FLOOR = 0.55;
/** Requests at which the volume factor reaches 1: log10(1 + 99) = 2. */
const VOLUME_DECADES = 2;
const DIVERSITY_STEP = 0.15;
const DIVERSITY_MAX_KINDS = 4;

export interface RiskSignal {
  value: string;
  /** Unix seconds of the latest feed observation; undefined when only lists or overlays say so. */
  last_seen: number | undefined;
  /**
   * 0 to 1: the age factor of list membership, by the list kind's own aging rule (list-aging.ts);
   * the signal counts with the larger of it and recency(last_seen). Undefined when no list says so.
   */
  strength?: number;
}

/** What the address is, beyond its signals: its network type and whether it sits in shared space. */
export interface RiskContext {
  /** network.type from the dataset (or a network list); undefined when no dataset answered. */
  network_type?: string;
  /** The address is in carrier-grade NAT space (100.64.0.0/10): shared whatever the dataset says. */
  cgnat?: boolean;
}

export interface RiskParts {
  score: number;
  /** What the network type alone gives (`from`: the type, or null when no prior applied). */
  prior: { value: number; from: string | null };
  category: { value: number; from: string | null };
  behavior: { value: number; from: string | null };
  /** The volume factor and the requests behind the behaviours. */
  volume: { value: number; observations: number };
  /** The diversity factor and the distinct behaviours that weigh. */
  diversity: { value: number; behaviors: number };
  /** The shared-address factor (`from`: why the address is shared, null when it is not). */
  shared: { value: number; from: string | null };
  /** behavior × volume × diversity × shared, capped at 100. */
  evidence: number;
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

/** The volume factor for n requests: 0.55 for none or one, rising on a log scale to 1 at 99. */
export const volumeFactor = (n: number): number =>
  VOLUME_FLOOR + (1 - VOLUME_FLOOR) * Math.min(1, Math.log10(1 + Math.max(0, n)) / VOLUME_DECADES);

/**
 * The score and its parts. `requests`: the requests (observations) behind the behaviours, each
 * counted once however many behaviours it showed.
 */
export function riskScore(
  categories: readonly RiskSignal[],
  behaviors: readonly RiskSignal[],
  requests: number,
  nowS: number,
  context: RiskContext = {},
): RiskParts {
  const benign = categories.some((c) => BENIGN_CATEGORIES.has(c.value));
  let cat = 0;
  let catFrom: string | null = null;
  let sharedFrom: string | null = null;
  for (const c of categories) {
    if (sharedFrom === null && SHARED_CATEGORIES.has(c.value)) sharedFrom = c.value;
    const w = (CATEGORY_WEIGHT[c.value] ?? 0) * signalFactor(c, nowS);
    if (w > cat) [cat, catFrom] = [w, c.value];
  }
  if (sharedFrom === null && context.network_type !== undefined && SHARED_NETWORKS.has(context.network_type))
    sharedFrom = context.network_type;
  if (sharedFrom === null && context.cgnat) sharedFrom = 'CGNAT';
  let beh = 0;
  let behFrom: string | null = null;
  let kinds = 0;
  let abusive = false;
  for (const b of behaviors) {
    if (benign && AUTOMATION.has(b.value)) continue;
    const w = (BEHAVIOR_WEIGHT[b.value] ?? 0) * signalFactor(b, nowS);
    if (w <= 0) continue;
    kinds++;
    if (ABUSIVE.has(b.value)) abusive = true;
    if (w > beh) [beh, behFrom] = [w, b.value];
  }
  const volume = volumeFactor(requests);
  const diversity = kinds === 0 ? 1 : 1 + DIVERSITY_STEP * (Math.min(kinds, DIVERSITY_MAX_KINDS) - 1);
  const shared = sharedFrom === null ? 1 : SHARED_FACTOR;
  const evidence = Math.min(100, beh * volume * diversity * shared);
  const base = Math.max(cat, evidence) + 0.25 * Math.min(cat, evidence);
  const priorFrom = benign || context.network_type === undefined || !(context.network_type in NETWORK_PRIOR) ? null : context.network_type;
  const prior = priorFrom === null ? 0 : NETWORK_PRIOR[priorFrom]!;
  let score = Math.round(Math.min(100, Math.max(0, prior + (1 - prior / 100) * base)));
  const capped = benign && !abusive && score > BENIGN_CAP;
  if (capped) score = BENIGN_CAP;
  return {
    score,
    prior: { value: prior, from: priorFrom },
    category: { value: round2(cat), from: catFrom },
    behavior: { value: round2(beh), from: behFrom },
    volume: { value: round2(volume), observations: requests },
    diversity: { value: round2(diversity), behaviors: kinds },
    shared: { value: shared, from: sharedFrom },
    evidence: round2(evidence),
    benign_cap: capped,
  };
}

/** The score of an address with no signals at all: the prior of its network alone. */
export const priorScore = (networkType: string | undefined): number =>
  networkType !== undefined && networkType in NETWORK_PRIOR ? NETWORK_PRIOR[networkType]! : 0;
