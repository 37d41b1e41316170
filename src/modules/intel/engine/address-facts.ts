/** Behaviours are those seen in a 90-day window (the contract); every feed observation ages out with it (s). */
export const WINDOW_S = 90 * 86_400;

/** Kinds of observation an address holds (address-store.ts keeps them; composeIntelligence reads them). */
export const PROVIDER = 1;
export const CATEGORY = 2;
export const BEHAVIOR = 3;
export const DEVICE = 4;
/**
 * Requests from the address on a feed, each counted once whatever behaviours it showed: the volume
 * of the risk score counts requests, not behaviour hits. Kind 7: 5 and 6 are the store's windows.
 */
export const REQUESTS = 7;

/** Kinds that are observations (the others are the store's LOGIN and CRAWL windows). */
export const isObservation = (kind: number): boolean => kind <= DEVICE || kind === REQUESTS;

/** One observation of an address, in Unix seconds: what umbra saw, from which feed, when and how often. */
export interface AddressObs {
  kind: typeof PROVIDER | typeof CATEGORY | typeof BEHAVIOR | typeof DEVICE | typeof REQUESTS;
  /** `${provider}|${type}`, a category, a behaviour, an operating system, or '' (requests). */
  key: string;
  feed: string;
  first: number;
  last: number;
  count: number;
  /** Devices: the latest version seen ('' when none). */
  version: string;
}

/**
 * Observations from records umbra's demo simulator made up are kept under their feed's twin id (the
 * feed id with this suffix), so evidence says `simulated` per source at no cost in memory.
 */
const SIMULATED_SUFFIX = '~simulated';
export const simulatedFeed = (feed: string): string => `${feed}${SIMULATED_SUFFIX}`;
/** The feed an observation's stored feed id names, and whether its records were simulated. */
export const feedOf = (stored: string): { feed: string; simulated: boolean } =>
  stored.endsWith(SIMULATED_SUFFIX)
    ? { feed: stored.slice(0, -SIMULATED_SUFFIX.length), simulated: true }
    : { feed: stored, simulated: false };
