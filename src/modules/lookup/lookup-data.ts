import { dataVersion, type DataVersion, type ListVersion } from './data-version.ts';
import type { IpDataset, NetworkRecord, NetworkType, NetworkTypeEvidence } from './ip-dataset.ts';
import type { ParsedIp } from '../../lib/ip-address.ts';
import type { NetworkEvidence } from './intelligence.ts';
import { networkRecord } from './honest-location.ts';

/** The network a list's publisher owns: what an address of its list in no announced range belongs to. */
export interface NetworkOwner {
  asn: number;
  org: string;
  domain: string;
}

/** Network types that imported lists assert for their ranges (implemented by the intelligence lists). */
export interface NetworkTypeOverride {
  /**
   * The network.type of the most specific listed range that holds the address, the provider whose list
   * says so, and that provider's own network when it is known (the list is of its own ranges).
   */
  find(ip: ParsedIp): { type: NetworkType; provider: string; published_at: number; stale: boolean; owner?: NetworkOwner } | undefined;
  /** Ranges taken from the lists (before flattening). */
  readonly ranges: number;
  /** kind/provider of the network lists left out because they are too old to assert anything. */
  readonly expired: readonly string[];
}

/**
 * One consistent view of the data a lookup reads: the IP dataset, the network types that imported
 * lists assert, and the version naming both. Immutable: a swap replaces the whole view, so a lookup
 * that took it answers from one version and says which.
 */
export interface LookupView {
  readonly dataset: IpDataset;
  readonly version: DataVersion;
  /**
   * The dataset's network record, with network.type replaced where an imported network list covers the
   * address, and the list publisher's ASN and organisation where the dataset has no ASN for it.
   */
  network(ip: ParsedIp): NetworkRecord;
  /** Where network(ip).type came from (`?explain=true`). */
  networkEvidence(ip: ParsedIp): NetworkEvidence;
  /** True when imported lists override some network records: network(ip) is then not always the dataset's. */
  readonly overridden: boolean;
}

const NOT_RECORDED: NetworkTypeEvidence = Object.freeze({
  source: 'none',
  reason: 'the IP dataset does not record where its types come from',
});

/** The dataset's own account of a type, before any list. */
const datasetEvidence = (dataset: IpDataset, ip: ParsedIp): NetworkTypeEvidence =>
  dataset.networkTypeEvidence ? dataset.networkTypeEvidence(ip) : NOT_RECORDED;

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
  if (!override) {
    return {
      dataset,
      version,
      overridden: false,
      network: (ip) => dataset.network(ip),
      networkEvidence: (ip) => ({ type: dataset.network(ip).type, ...datasetEvidence(dataset, ip) }),
    };
  }
  // One derived record per (dataset record, list value), so an overridden lookup allocates nothing either.
  const derived = new WeakMap<NetworkRecord, Map<object, NetworkRecord>>();
  const network = (ip: ParsedIp): NetworkRecord => {
    const base = dataset.network(ip);
    const o = override.find(ip);
    if (!o) return base;
    const owner = base.asn === 0 ? o.owner : undefined;
    if (o.type === base.type && !owner) return base;
    let byValue = derived.get(base);
    if (!byValue) derived.set(base, (byValue = new Map()));
    let rec = byValue.get(o);
    if (!rec) {
      const owned = owner ? { asn: owner.asn, isp: owner.org, org: owner.org, domain: owner.domain } : {};
      const fields = { ...base, ...owned, type: o.type };
      // A loaded dataset's record is flagged: its variant is made as every flagged record is (one hidden class, its JSON).
      rec =
        base.bogon === undefined || base.anycast === undefined ? Object.freeze(fields) : networkRecord(fields, base.bogon, base.anycast);
      byValue.set(o, rec);
    }
    return rec;
  };
  return {
    dataset,
    version,
    overridden: true,
    network,
    networkEvidence(ip) {
      const o = override.find(ip);
      const own = datasetEvidence(dataset, ip);
      if (!o) return { type: dataset.network(ip).type, ...own };
      const base = dataset.network(ip);
      const agrees = o.type === base.type ? `; the ASN data agrees (${own.reason})` : `; the ASN data says ${base.type} (${own.reason})`;
      const owned = base.asn === 0 && o.owner ? `; the ASN data has no ASN for it, so it is the publisher's AS${o.owner.asn}` : '';
      const when = `published ${new Date(o.published_at * 1000).toISOString().slice(0, 10)}${o.stale ? ', stale' : ''}`;
      return {
        type: o.type,
        source: 'list',
        reason: `the address is in the imported ${o.type} list of ${o.provider} (${when})${agrees}${owned}`,
      };
    },
  };
}
