import type { NetworkOwner, NetworkTypeOverride } from '../../lookup/lookup-data.ts';
import type { NetworkType } from '../../lookup/ip-dataset.ts';
import { find4, find6, NONE, V4TableBuilder, V6TableBuilder } from '../../dataset/range-table.ts';
import { parseCidr, type Cidr } from './cidr.ts';
import type { IntelList } from './intel-list.ts';
import { isNetworkKind } from './list-kinds.ts';
import { listAge } from './list-aging.ts';

interface Item {
  start: bigint;
  end: bigint;
  val: number;
}

const big = (w: Uint32Array): bigint => (BigInt(w[0]!) << 96n) | (BigInt(w[1]!) << 64n) | (BigInt(w[2]!) << 32n) | BigInt(w[3]!);
const words = (x: bigint, out = new Uint32Array(4)): Uint32Array => {
  for (let k = 3; k >= 0; k--, x >>= 32n) out[k] = Number(x & 0xffffffffn);
  return out;
};

/**
 * Cuts nested-or-disjoint ranges (CIDRs never partly overlap) into ascending disjoint segments, each
 * with the value of the innermost range holding it; for equal ranges the later item wins.
 */
function flatten(items: Item[], emit: (from: bigint, to: bigint, val: number) => void): void {
  items.sort((a, b) => (a.start !== b.start ? (a.start < b.start ? -1 : 1) : a.end !== b.end ? (a.end > b.end ? -1 : 1) : 0));
  const stack: Item[] = [];
  let cursor = 0n;
  const out = (from: bigint, to: bigint, val: number) => {
    if (from <= to) emit(from, to, val);
  };
  for (const it of items) {
    while (stack.length > 0 && stack[stack.length - 1]!.end < it.start) {
      const top = stack.pop()!;
      out(cursor, top.end, top.val);
      if (top.end + 1n > cursor) cursor = top.end + 1n;
    }
    if (stack.length > 0) out(cursor, it.start - 1n, stack[stack.length - 1]!.val);
    if (it.start > cursor) cursor = it.start;
    stack.push(it);
  }
  while (stack.length > 0) {
    const top = stack.pop()!;
    out(cursor, top.end, top.val);
    if (top.end + 1n > cursor) cursor = top.end + 1n;
  }
}

/**
 * The networks of the publishers whose range files umbra imports as network lists (provider tags as
 * the importer sets them from the format). A publisher's file lists its own ranges, so an address in
 * it that the ASN data has in no announced range (a range announced after the data's snapshot, or
 * only inside the cloud) belongs to the publisher's network: its main ASN, as the publisher registers it.
 */
export const PUBLISHER_NETWORKS: Readonly<Record<string, NetworkOwner>> = {
  AWS: { asn: 16509, org: 'Amazon.com, Inc.', domain: 'amazon.com' },
  GOOGLE_CLOUD: { asn: 396982, org: 'Google LLC', domain: 'google.com' },
  AZURE: { asn: 8075, org: 'Microsoft Corporation', domain: 'microsoft.com' },
  CLOUDFLARE: { asn: 13335, org: 'Cloudflare, Inc.', domain: 'cloudflare.com' },
};

/**
 * A range table from the imported lists whose kind is a network type (DATACENTER from AWS's or
 * Google Cloud's ranges, ...), for the lookup to override the ASN-based network.type: a cloud
 * provider's ranges announced by someone else's ASN, or a cloud ASN's ranges listed as something
 * more specific. Other kinds are ignored. A network list ages like any list (list-aging.ts): once
 * expired at nowS (Unix seconds) it asserts nothing, so a cloud's ranges from years ago no longer
 * make today's owner of those addresses a DATACENTER; a stale one still counts (a type has no
 * strength to weaken) and says so in the evidence. Pure: build it again when the lists' revision
 * changes and as time passes (the caller rebuilds it every day).
 */
export function networkTypeOverride(lists: IntelList[], nowS: number): NetworkTypeOverride {
  const values: Array<{ type: NetworkType; provider: string; published_at: number; stale: boolean; owner?: NetworkOwner }> = [];
  const v4: Item[] = [];
  const v6: Item[] = [];
  let ranges = 0;
  const expired: string[] = [];
  // Sorted so that which list wins on an identical range does not depend on storage order.
  const used = lists
    .filter((l) => isNetworkKind(l.kind))
    .sort((a, b) => a.kind.localeCompare(b.kind) || a.provider.localeCompare(b.provider));
  for (const list of used) {
    const age = listAge(list, nowS);
    if (age.state === 'expired') {
      expired.push(`${list.kind}/${list.provider}`);
      continue;
    }
    const owner = PUBLISHER_NETWORKS[list.provider];
    const value = {
      type: list.kind as NetworkType,
      provider: list.provider,
      published_at: list.published_at,
      stale: age.state === 'stale',
    };
    const val = values.push(Object.freeze({ ...value, ...(owner ? { owner } : {}) })) - 1;
    for (const text of list.cidrs) {
      const r = parseCidr(text);
      if (!r.ok) continue;
      const c: Cidr = r.cidr;
      (c.version === 4 ? v4 : v6).push({ start: big(c.start), end: big(c.end), val });
      ranges++;
    }
  }
  const b4 = new V4TableBuilder();
  flatten(v4, (from, to, val) => b4.add(Number(from), Number(to), val));
  const t4 = b4.finish();
  const b6 = new V6TableBuilder();
  const s = new Uint32Array(4);
  const e = new Uint32Array(4);
  flatten(v6, (from, to, val) => b6.add(words(from, s), words(to, e), val));
  const t6 = b6.finish();
  return {
    ranges,
    expired,
    find(ip) {
      const i = ip.version === 4 ? find4(t4.starts, t4.vals, ip.v4) : find6(t6.starts, t6.vals, ip.v6);
      return i === NONE ? undefined : values[i];
    },
  };
}
