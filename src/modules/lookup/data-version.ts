import { createHash } from 'node:crypto';
import type { DatasetInfo } from './ip-dataset.ts';

/** What an imported list contributes to the data version. */
export interface ListVersion {
  kind: string;
  provider: string;
  version: string;
}

/** The versions behind every lookup answer, as `X-Data-Version` and `umbra data status` show them. */
export interface DataVersion {
  /** The header value: `dataset=<build time>; <source>=<version>...; lists=<count>:<digest>`. */
  header: string;
  dataset: { built_at: number; sources: Record<string, string> };
  lists: { count: number; digest: string };
}

const iso = (unixS: number) => new Date(unixS * 1000).toISOString().replace('.000Z', 'Z');
/** `@ip-location-db/asn` → `asn`: a header value keeps to short tokens (no '@' or '/'). */
const token = (name: string) => name.replace(/^@[^/]+\//, '').replace(/[^A-Za-z0-9._-]/g, '_');

/**
 * Composes the data version from the IP dataset's build (time and source package versions) and the
 * imported lists (count and a digest of their kinds, providers and content versions, independent of
 * their order). Live feed observations are not part of it: they change every second and are shown
 * with their counts by `umbra data status`. Pure, and cheap enough to recompute on each change.
 */
export function dataVersion(info: DatasetInfo, lists: readonly ListVersion[]): DataVersion {
  const lines = lists.map((l) => `${l.kind}/${l.provider}/${l.version}`).sort();
  const digest = lines.length === 0 ? '0' : createHash('sha256').update(lines.join('\n')).digest('hex').slice(0, 12);
  const sources = Object.keys(info.sources)
    .sort()
    .map((k) => `${token(k)}=${token(info.sources[k]!)}`);
  const header = [`dataset=${iso(info.built_at)}`, ...sources, `lists=${lines.length}:${digest}`].join('; ');
  return { header, dataset: { built_at: info.built_at, sources: { ...info.sources } }, lists: { count: lines.length, digest } };
}
