import type { AccountInfo } from '../modules/accounts/account-service.ts';
import type { DomainResult } from '../modules/domains/domain-service.ts';
import type { ExportList, ExportMeta } from '../modules/exports/export-service.ts';
import type { FeedDef } from '../modules/feeds/feed-catalog.ts';
import type { Evidence, EvidenceSource } from '../modules/lookup/intelligence.ts';
import type { IpResult } from '../modules/lookup/lookup-service.ts';

/**
 * Module results → proto message objects. Members keep their names (the proto uses the HTTP JSON
 * names); only what protobuf spells differently is rewritten: instants become Timestamps, JSON-typed
 * members become Struct/Value. Unknown extra members are ignored by the encoder, so a member added to
 * a module result later does not break the mirror (it is just not sent until the proto has it).
 * null → unset: protobufjs skips null for optional fields.
 */

export interface Timestamp {
  seconds: number;
  nanos: number;
}

/** The same instant as an HTTP integer in the given unit (honeypot streams: milliseconds → nanos). */
export function toTimestamp(value: number, unit: 's' | 'ms' = 's'): Timestamp {
  if (unit === 's') return { seconds: value, nanos: 0 };
  const seconds = Math.floor(value / 1000);
  return { seconds, nanos: (value - seconds * 1000) * 1_000_000 };
}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** A JSON value as google.protobuf.Value (keepCase names). */
export function toValue(v: Json | undefined): Record<string, unknown> {
  if (v === null || v === undefined) return { null_value: 'NULL_VALUE' };
  if (typeof v === 'number') return { number_value: v };
  if (typeof v === 'string') return { string_value: v };
  if (typeof v === 'boolean') return { bool_value: v };
  if (Array.isArray(v)) return { list_value: { values: v.map(toValue) } };
  return { struct_value: toStruct(v) };
}

/** A JSON object as google.protobuf.Struct. */
export function toStruct(o: { [k: string]: Json }): { fields: Record<string, unknown> } {
  const fields: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) fields[k] = toValue(v);
  return { fields };
}

/** The IP result as IPLookupResult; one function for LookupIP and LookupIPs, so new members are added once. */
export function ipResultToProto(r: IpResult): Record<string, unknown> {
  const intel = r.intelligence;
  // Most results need nothing converted: the result is the message as it is, so its intelligence (for
  // most addresses a shared frozen record) stays the object whose encoding the LookupIP encoder keeps.
  if (intel.devices.length === 0 && intel.providers.length === 0 && r.evidence === undefined)
    return r as unknown as Record<string, unknown>;
  return {
    ...r,
    intelligence: {
      ...intel,
      // Most addresses have neither: the empty arrays are passed as they are.
      devices: intel.devices.length === 0 ? intel.devices : intel.devices.map((d) => ({ ...d, last_seen: toTimestamp(d.last_seen) })),
      providers:
        intel.providers.length === 0 ? intel.providers : intel.providers.map((p) => ({ ...p, last_seen: toTimestamp(p.last_seen) })),
    },
    evidence: r.evidence && evidenceToProto(r.evidence),
  };
}

/** The instants an evidence source may carry (Unix seconds); which ones depends on its `source`. */
const SOURCE_INSTANTS = ['imported_at', 'published_at', 'created_at', 'first_seen', 'last_seen'] as const;

/** One EvidenceSource: the members its kind has, instants as Timestamps; the others stay unset. */
export function evidenceSourceToProto(s: EvidenceSource): Record<string, unknown> {
  const out: Record<string, unknown> = { ...s };
  for (const k of SOURCE_INSTANTS) {
    const v = (s as Partial<Record<(typeof SOURCE_INSTANTS)[number], number>>)[k];
    if (v !== undefined) out[k] = toTimestamp(v);
  }
  return out;
}

/** `explain=true` evidence as the Evidence message; a risk part's null `from` becomes an unset field. */
export function evidenceToProto(e: Evidence): Record<string, unknown> {
  const withSources = <T extends { sources: EvidenceSource[] }>(x: T) => ({ ...x, sources: x.sources.map(evidenceSourceToProto) });
  return {
    network: e.network,
    categories: e.categories.map(withSources),
    providers: e.providers.map(withSources),
    behavior: e.behavior.map(withSources),
    devices: e.devices.map(withSources),
    risk: e.risk,
  };
}

export const accountToProto = (a: AccountInfo): AccountInfo => a;

export function domainToProto(d: DomainResult): Record<string, unknown> {
  const data = d.data;
  return {
    type: d.type,
    data: {
      ...data,
      recent_events: data.recent_events.map((e) => ({ ...e, timestamp: toTimestamp(e.timestamp) })),
      activity_stats: data.activity_stats && {
        first_seen: toTimestamp(data.activity_stats.first_seen),
        last_seen: toTimestamp(data.activity_stats.last_seen),
      },
      hour_dow_heatmap: data.hour_dow_heatmap?.map((hours) => ({ hours })),
    },
  };
}

export function exportListToProto(l: ExportList): Record<string, unknown> {
  return { ...l, feeds: l.feeds.map((i) => ({ ...i, created_at: toTimestamp(i.created_at) })) };
}

export function exportMetaToProto(m: ExportMeta): Record<string, unknown> {
  return { ...m, date: toTimestamp(m.date), created_at: toTimestamp(m.created_at) };
}

/**
 * A feed record (the object of the stream line) as its stream message. Byte members (adb `command`,
 * https `raw`) stay base64 strings: the encoder decodes them into bytes, and protojson shows base64.
 */
export function feedRecordToProto(feed: FeedDef, record: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...record, timestamp: toTimestamp(record.timestamp as number, feed.unit) };
  const meta = record.meta as Record<string, Json> | undefined;
  if (meta) out.meta = { ...meta, pool_id: toValue(meta.pool_id) };
  // honeypot_https: the parsed ClientHello is free-form JSON, or null when it could not be parsed.
  if (feed.id === 'honeypot_https') out.details = record.details == null ? undefined : toStruct(record.details as { [k: string]: Json });
  return out;
}
