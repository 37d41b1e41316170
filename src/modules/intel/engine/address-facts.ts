/** Behaviours are those seen in a 90-day window (the contract); every feed observation ages out with it (s). */
export const WINDOW_S = 90 * 86_400;

/** Kinds of observation an address holds (address-store.ts keeps them; composeIntelligence reads them). */
export const PROVIDER = 1;
export const CATEGORY = 2;
export const BEHAVIOR = 3;
export const DEVICE = 4;

/** One observation of an address, in Unix seconds: what umbra saw, from which feed, when and how often. */
export interface AddressObs {
  kind: typeof PROVIDER | typeof CATEGORY | typeof BEHAVIOR | typeof DEVICE;
  /** `${provider}|${type}`, a category, a behaviour, or an operating system. */
  key: string;
  feed: string;
  first: number;
  last: number;
  count: number;
  /** Devices: the latest version seen ('' when none). */
  version: string;
}
