import { dataVersion, type DataVersion, type ListVersion } from './data-version.ts';
import type { IpDataset, NetworkRecord, NetworkType } from './ip-dataset.ts';
import type { ParsedIp } from '../../lib/ip-address.ts';

/** Network types that imported lists assert for their ranges (implemented by the intelligence lists). */
export interface NetworkTypeOverride {
  /** The network.type of the most specific listed range that holds the address, and the provider whose list says so. */
  find(ip: ParsedIp): { type: NetworkType; provider: string } | undefined;
  /** Ranges taken from the lists (before flattening). */
  readonly ranges: number;
}

/**
 * One consistent view of the data a lookup reads: the IP dataset, the network types that imported
 * lists assert, and the version naming both. Immutable: a swap replaces the whole view, so a lookup
 * that took it answers from one version and says which.
 */
export interface LookupView {
  readonly dataset: IpDataset;
  readonly version: DataVersion;
  /** The dataset's network record, with network.type replaced where an imported network list covers the address. */
  network(ip: ParsedIp): NetworkRecord;
}

/**
 * Holds the current LookupView and swaps it atomically when the dataset is rebuilt or the lists
 * change. Lookups call `view()` once per request; nothing they hold is ever mutated.
 */
export class LookupData {
  private current: LookupView;
  private lists: readonly ListVersion[] = [];
  private override: NetworkTypeOverride | undefined;

  constructor(dataset: IpDataset) {
    this.current = makeView(dataset, undefined, dataVersion(dataset.info, []));
  }

  view(): LookupView {
    return this.current;
  }

  get dataset(): IpDataset {
    return this.current.dataset;
  }

  /** A rebuilt IP dataset: later lookups answer from it; lookups already running finish on the old one. */
  swapDataset(dataset: IpDataset): void {
    this.current = makeView(dataset, this.override, dataVersion(dataset.info, this.lists));
  }

  /** The imported lists changed: their versions enter the data version, network lists override network.type. */
  setLists(lists: readonly ListVersion[], override: NetworkTypeOverride | undefined): void {
    this.lists = lists.map((l) => ({ kind: l.kind, provider: l.provider, version: l.version }));
    this.override = override && override.ranges > 0 ? override : undefined;
    this.current = makeView(this.current.dataset, this.override, dataVersion(this.current.dataset.info, this.lists));
  }
}

function makeView(dataset: IpDataset, override: NetworkTypeOverride | undefined, version: DataVersion): LookupView {
  if (!override) return { dataset, version, network: (ip) => dataset.network(ip) };
  // One derived record per (dataset record, type), so an overridden lookup allocates nothing either.
  const derived = new WeakMap<NetworkRecord, Map<NetworkType, NetworkRecord>>();
  return {
    dataset,
    version,
    network(ip) {
      const base = dataset.network(ip);
      const o = override.find(ip);
      if (!o || o.type === base.type) return base;
      let byType = derived.get(base);
      if (!byType) derived.set(base, (byType = new Map()));
      let rec = byType.get(o.type);
      if (!rec) byType.set(o.type, (rec = Object.freeze({ ...base, type: o.type })));
      return rec;
    },
  };
}
