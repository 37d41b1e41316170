/** service.md: behaviours are those seen in a 90 day window; every feed observation ages out with it (s). */
export const WINDOW_S = 90 * 86_400;

/** What umbra has observed about one address, in Unix seconds. Kept compact: most maps stay absent. */
export interface Obs {
  first: number;
  last: number;
  count: number;
}

/** Observations keyed by the feed that made them. */
export type BySource = Map<string, Obs>;

export interface DeviceObs extends Obs {
  version: string;
}

export interface AddressFacts {
  /** `${provider}|${type}` → feed → observations. */
  providers?: Map<string, BySource>;
  /** Categories observed without a provider (BOTNET from an unattributed dropper). */
  categories?: Map<string, BySource>;
  behaviors?: Map<string, BySource>;
  /** `${os}|${source feed}` → latest version seen. */
  devices?: Map<string, DeviceObs & { os: string; feed: string }>;
  /** CREDENTIAL_STUFFING window: login POSTs since `start`. */
  logins?: { start: number; n: number };
  /** ACTIVE_CRAWLER window: distinct domain+path since `start` (capped at the threshold). */
  paths?: { start: number; seen: Set<string> };
}

export function bump(map: Map<string, BySource>, key: string, feed: string, t: number, n = 1): void {
  let bySource = map.get(key);
  if (!bySource) map.set(key, (bySource = new Map()));
  const o = bySource.get(feed);
  if (!o) bySource.set(feed, { first: t, last: t, count: n });
  else {
    if (t < o.first) o.first = t;
    if (t > o.last) o.last = t;
    o.count += n;
  }
}

/** Latest observation of any kind, for pruning. */
export function lastSeen(f: AddressFacts): number {
  let last = -Infinity;
  for (const m of [f.providers, f.categories, f.behaviors]) if (m) for (const s of m.values()) for (const o of s.values()) if (o.last > last) last = o.last;
  if (f.devices) for (const d of f.devices.values()) if (d.last > last) last = d.last;
  if (f.logins && f.logins.start > last) last = f.logins.start;
  if (f.paths && f.paths.start > last) last = f.paths.start;
  return last;
}
