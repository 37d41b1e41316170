import { canonicalCidrs, parseCidr, type Cidr } from './cidr.ts';

/** Publisher formats the importer recognises from a file's content (docs/intel-lists.md). */
export const LIST_FORMATS = [
  'cidr-lines',
  'address-lines',
  'tor-bulk-exit-list',
  'tor-exit-addresses',
  'geofeed-csv',
  'google-prefixes',
  'gcp-cloud-json',
  'aws-ip-ranges',
  'azure-service-tags',
  'cloudflare-api',
  'json-cidr-array',
  'datadog-ip-ranges',
  'stripe-ips',
  'github-meta',
] as const;
export type ListFormat = (typeof LIST_FORMATS)[number];

/** A rejected entry: its 1-based line in the file (0 when it cannot be placed) and why. */
export interface LineProblem {
  line: number;
  entry: string;
  reason: string;
}

export interface ParsedList {
  format: ListFormat;
  /** Canonical, sorted, deduplicated. */
  cidrs: Cidr[];
  /** Entries read (valid or not), before deduplication. */
  entries: number;
  rejected: LineProblem[];
  /** Accepted entries that were changed: host bits cleared. */
  normalised: LineProblem[];
  /** Unix seconds of the publisher's own time for the file, where the format carries one (its header, the Tor dates). */
  published_at?: number;
  /** Multi-section formats (AWS and GCP services, Azure tags, Datadog, Stripe and GitHub sections): every section, and those imported. */
  sections?: { available: string[]; imported: string[] };
}

export class ListFormatError extends Error {}

export interface ParseOptions {
  /** Upper-case kind: picks default sections (Datadog) and names a bare-address list of TOR_NODE. */
  kind?: string;
  /** Sections to import (case-insensitive); `all` for every one. */
  sections?: string[];
}

/** One candidate range with where it came from. */
interface Entry {
  value: unknown;
  /** JSON entries are placed on a line only when they are reported (see LineFinder). */
  line: number | (() => number);
}

/** Detects the format from the content, parses it, and canonicalises the ranges. Throws ListFormatError for an unreadable file. */
export function parseList(input: Buffer | string, options: ParseOptions = {}): ParsedList {
  let text = typeof input === 'string' ? input : input.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const head = text.trimStart()[0];
  if (head === '{' || head === '[') return parseJsonList(text, options);
  return parseTextList(text, options);
}

function finish(format: ListFormat, entries: Entry[], sections?: ParsedList['sections']): ParsedList {
  const good: Cidr[] = [];
  const rejected: LineProblem[] = [];
  const normalised: LineProblem[] = [];
  const lineOf = (e: Entry) => (typeof e.line === 'number' ? e.line : e.line());
  for (const e of entries) {
    const entry = typeof e.value === 'string' ? e.value : (JSON.stringify(e.value) ?? String(e.value));
    if (typeof e.value !== 'string') {
      rejected.push({ line: lineOf(e), entry, reason: 'not a string' });
      continue;
    }
    const r = parseCidr(e.value);
    if (!r.ok) rejected.push({ line: lineOf(e), entry, reason: r.reason });
    else {
      good.push(r.cidr);
      if (r.normalised) normalised.push({ line: lineOf(e), entry, reason: `host bits set: read as ${r.cidr.text}` });
    }
  }
  return { format, cidrs: canonicalCidrs(good), entries: entries.length, rejected, normalised, ...(sections ? { sections } : {}) };
}

// ---------------------------------------------------------------- line formats

const EXIT_ADDRESS = /^ExitAddress\s+(\S+)(\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})?\s*$/;
const TOR_DATE = /^(?:Downloaded|Published|LastStatus|ExitAddress\s+\S+)\s+(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})\s*$/;
const TOR_KEYWORD = /^(ExitNode|Published|LastStatus|Downloaded)\b/; // Downloaded: CollecTor archive header

function parseTextList(text: string, options: ParseOptions): ParsedList {
  const lines = text.split(/\r?\n/);
  if (lines.some((l) => l.startsWith('ExitNode '))) {
    // Tor's exit-addresses (TorDNSEL): blocks of ExitNode / Published / LastStatus / ExitAddress lines.
    const entries: Entry[] = [];
    const rejected: LineProblem[] = [];
    // The list is as recent as its latest date: the archive's Downloaded header, else the last exit test or status.
    let latest: number | undefined;
    lines.forEach((raw, i) => {
      const l = raw.trim();
      const d = TOR_DATE.exec(l);
      if (d) {
        const t = publisherTime(`${d[1]!.replace(' ', 'T')}Z`);
        if (t !== undefined && (latest === undefined || t > latest)) latest = t;
      }
      if (l === '' || l.startsWith('@') || l.startsWith('#') || TOR_KEYWORD.test(l)) return;
      const m = EXIT_ADDRESS.exec(l);
      if (m) entries.push({ value: m[1], line: i + 1 });
      else
        rejected.push({
          line: i + 1,
          entry: l.slice(0, 100),
          reason: 'not an exit-addresses line (ExitNode, Published, LastStatus or ExitAddress ip date)',
        });
    });
    const out = finish('tor-exit-addresses', entries);
    if (latest !== undefined) out.published_at = latest;
    out.rejected.unshift(...rejected);
    out.rejected.sort((a, b) => a.line - b.line);
    out.entries += rejected.length;
    return out;
  }
  const entries: Entry[] = [];
  const firstFields: string[] = [];
  let commas = 0;
  let torComment = false;
  lines.forEach((raw, i) => {
    // `#` comments, and `;` ones as in Spamhaus DROP (`192.0.2.0/24 ; SBL123`).
    const cut = raw.search(/[#;]/);
    if (cut >= 0 && /tor\b.*exit|exit node/i.test(raw.slice(cut))) torComment = true;
    const l = (cut >= 0 ? raw.slice(0, cut) : raw).trim();
    if (l === '') return;
    const comma = l.indexOf(',');
    if (comma >= 0) commas++;
    entries.push({ value: l, line: i + 1 });
    firstFields.push(comma >= 0 ? l.slice(0, comma).trim() : l);
  });
  // RFC 8805 geofeed (Apple's Private Relay egress-ip-ranges.csv): prefix,country,region,city,postal on every line.
  // Elsewhere a comma is no separator: such a line is rejected whole, never cut down to its first address.
  if (commas > 0 && commas === entries.length)
    return finish(
      'geofeed-csv',
      entries.map((e, k) => ({ ...e, value: firstFields[k] })),
    );
  const out = finish('cidr-lines', entries);
  // A list of bare addresses (no prefix lengths) is Tor's bulk exit list when it says so or is imported as TOR_NODE.
  const bare = entries.length > 0 && entries.every((e) => typeof e.value === 'string' && !e.value.includes('/'));
  if (bare) out.format = torComment || options.kind === 'TOR_NODE' ? 'tor-bulk-exit-list' : 'address-lines';
  return out;
}

// ---------------------------------------------------------------- JSON formats

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const isObject = (v: unknown): v is Record<string, Json> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/**
 * Places reported JSON string values on their source lines. They are looked up in document order
 * (the order JSON.parse keeps and the walkers below follow), each search starting where the last
 * one matched. A value written with escapes (`"1.2.3.0\/24"`) is not found and gets line 0; after
 * a few such misses the finder stops searching, so a large file never costs a scan per entry.
 */
class LineFinder {
  private at = 0;
  private line = 1;
  private misses = 0;
  constructor(private readonly text: string) {}
  of(value: unknown): number {
    if (typeof value !== 'string' || this.misses >= 16) return 0;
    const needle = JSON.stringify(value);
    const i = this.text.indexOf(needle, this.at);
    if (i < 0) {
      this.misses++;
      return 0;
    }
    for (let k = this.at; k < i; k++) if (this.text.charCodeAt(k) === 10) this.line++;
    // A JSON string holds no raw newline, so the line stays right past it.
    this.at = i + needle.length;
    return this.line;
  }
}

function parseJsonList(text: string, options: ParseOptions): ParsedList {
  let doc: Json;
  try {
    doc = JSON.parse(text) as Json;
  } catch (e) {
    throw new ListFormatError(`the file starts like JSON but is not valid JSON: ${(e as Error).message}`);
  }
  const lines = new LineFinder(text);
  const entry = (value: unknown): Entry => ({ value, line: () => lines.of(value) });
  const out = parseJsonLayout(doc, options, entry);
  const published = isObject(doc) ? headerTime(doc) : undefined;
  if (published !== undefined) out.published_at = published;
  return out;
}

/**
 * The publisher's time in a JSON header: Google's `creationTime` (UTC without a zone), AWS's
 * `syncToken` (Unix seconds) or `createDate` (YYYY-MM-DD-hh-mm-ss, UTC), Google Cloud's `syncToken`
 * (Unix milliseconds), Datadog's `modified`. A value outside the years 2000 to 2100 is ignored.
 */
function headerTime(doc: Record<string, Json>): number | undefined {
  if (typeof doc.creationTime === 'string') {
    const t = publisherTime(doc.creationTime);
    if (t !== undefined) return t;
  }
  if (typeof doc.syncToken === 'string' && /^\d{10,13}$/.test(doc.syncToken)) {
    const n = Number(doc.syncToken);
    const t = plausible(doc.syncToken.length === 13 ? Math.floor(n / 1000) : n);
    if (t !== undefined) return t;
  }
  if (typeof doc.createDate === 'string') {
    const m = /^(\d{4})-(\d{2})-(\d{2})-(\d{2})-(\d{2})-(\d{2})$/.exec(doc.createDate);
    if (m) return publisherTime(`${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}Z`);
  }
  if (typeof doc.modified === 'string') return publisherTime(doc.modified);
  return undefined;
}

const plausible = (s: number): number | undefined => (s >= 946_684_800 && s < 4_102_444_800 ? s : undefined);

/** An ISO 8601 date or date-time; one without a zone is UTC (as Google and Datadog write theirs). */
export function publisherTime(text: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})(?:[T ](\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)(Z|[+-]\d{2}:?\d{2})?)?$/.exec(text.trim());
  if (!m) return undefined;
  const frac = m[2]?.replace(/\.(\d{1,3})\d*$/, '.$1');
  const ms = Date.parse(`${m[1]}T${frac ?? '00:00:00'}${m[3] ?? 'Z'}`);
  return Number.isNaN(ms) ? undefined : plausible(Math.floor(ms / 1000));
}

function parseJsonLayout(doc: Json, options: ParseOptions, entry: (value: unknown) => Entry): ParsedList {
  if (isStringArray(doc)) return finish('json-cidr-array', doc.map(entry));
  if (!isObject(doc)) throw new ListFormatError('unrecognised JSON: expected an object or an array of CIDR strings');

  const prefixes = doc.prefixes;
  if (Array.isArray(prefixes) && (Array.isArray(doc.ipv6_prefixes) || prefixes.some((p) => isObject(p) && 'ip_prefix' in p))) {
    // AWS ip-ranges.json: prefixes[].ip_prefix and ipv6_prefixes[].ipv6_prefix, each with a service.
    const rows = [
      ...prefixes.map((p) => ({ p, key: 'ip_prefix' })),
      ...(Array.isArray(doc.ipv6_prefixes) ? doc.ipv6_prefixes : []).map((p) => ({ p, key: 'ipv6_prefix' })),
    ];
    const pick = sectionPicker(
      rows.map(({ p }) => (isObject(p) && typeof p.service === 'string' ? p.service : '')),
      options,
      [],
    );
    return finish(
      'aws-ip-ranges',
      rows.filter(({ p }) => pick.has(isObject(p) ? p.service : '')).map(({ p, key }) => entry(isObject(p) ? p[key] : p)),
      pick.report,
    );
  }
  if (Array.isArray(prefixes)) {
    // Google's files: googlebot.json and its siblings ({creationTime, prefixes: [{ipv4Prefix|ipv6Prefix}]},
    // also OpenAI's and Bing's), and Google Cloud's cloud.json, whose prefixes carry service and scope.
    const cloud = prefixes.some((p) => isObject(p) && ('service' in p || 'scope' in p));
    const value = (p: Json) => (isObject(p) ? (p.ipv4Prefix ?? p.ipv6Prefix ?? p) : p);
    if (!cloud)
      return finish(
        'google-prefixes',
        prefixes.map((p) => entry(value(p))),
      );
    const pick = sectionPicker(
      prefixes.map((p) => (isObject(p) && typeof p.service === 'string' ? p.service : '')),
      options,
      [],
    );
    return finish(
      'gcp-cloud-json',
      prefixes.filter((p) => pick.has(isObject(p) ? p.service : '')).map((p) => entry(value(p))),
      pick.report,
    );
  }
  if (isObject(doc.result) && (isStringArray(doc.result.ipv4_cidrs) || isStringArray(doc.result.ipv6_cidrs))) {
    // Cloudflare's API (api.cloudflare.com/client/v4/ips): {result: {ipv4_cidrs, ipv6_cidrs, etag}, success}.
    const r = doc.result;
    return finish(
      'cloudflare-api',
      [...(isStringArray(r.ipv4_cidrs) ? r.ipv4_cidrs : []), ...(isStringArray(r.ipv6_cidrs) ? r.ipv6_cidrs : [])].map(entry),
    );
  }
  if (Array.isArray(doc.values) && doc.values.some((v) => isObject(v) && isObject(v.properties))) {
    // Azure ServiceTags_Public_*.json: values[] = {name, properties: {addressPrefixes}}.
    const tags = doc.values.filter(isObject);
    const name = (v: Record<string, Json>) => (typeof v.name === 'string' ? v.name : '');
    const pick = sectionPicker(tags.map(name), options, []);
    const out: Entry[] = [];
    for (const v of tags)
      if (pick.has(name(v)) && isObject(v.properties) && Array.isArray(v.properties.addressPrefixes))
        out.push(...v.properties.addressPrefixes.map(entry));
    return finish('azure-service-tags', out, pick.report);
  }
  const sections = Object.entries(doc);
  if (sections.some(([, v]) => isObject(v) && ('prefixes_ipv4' in v || 'prefixes_ipv6' in v))) {
    // Datadog ip-ranges: {version, modified, <service>: {prefixes_ipv4, prefixes_ipv6}}; `synthetics` are its monitors, `webhooks` its
    // senders.
    const named = sections.filter(([, v]) => isObject(v) && ('prefixes_ipv4' in v || 'prefixes_ipv6' in v));
    const byKind: Record<string, string[]> = { UPTIME_MONITOR: ['synthetics'], WEBHOOK_PROVIDER: ['webhooks'] };
    const pick = sectionPicker(
      named.map(([k]) => k),
      options,
      byKind[options.kind ?? ''] ?? [],
    );
    const out: Entry[] = [];
    for (const [k, v] of named) {
      if (!pick.has(k) || !isObject(v)) continue;
      for (const list of [v.prefixes_ipv4, v.prefixes_ipv6]) if (Array.isArray(list)) out.push(...list.map(entry));
    }
    return finish('datadog-ip-ranges', out, pick.report);
  }
  if (isStringArray(doc.hooks) && ('ssh_key_fingerprints' in doc || 'verifiable_password_authentication' in doc)) {
    // GitHub's api.github.com/meta: range lists per service (hooks, web, api, actions, ...) among other members; webhook senders by
    // default.
    const named = sections.filter(([, v]) => isStringArray(v) && v.length > 0 && parseCidr(v[0]!).ok);
    const pick = sectionPicker(
      named.map(([k]) => k),
      options,
      ['hooks'],
    );
    const out: Entry[] = [];
    for (const [k, v] of named) if (pick.has(k) && isStringArray(v)) out.push(...v.map(entry));
    return finish('github-meta', out, pick.report);
  }
  if (sections.length > 0 && sections.every(([, v]) => isStringArray(v))) {
    // Stripe's ips_*.json: {"WEBHOOKS": [...]} (or several sections, e.g. webhooks and api); the webhook senders by default.
    const pick = sectionPicker(
      sections.map(([k]) => k),
      options,
      ['webhooks'],
    );
    const out: Entry[] = [];
    for (const [k, v] of sections) if (pick.has(k) && isStringArray(v)) out.push(...v.map(entry));
    return finish('stripe-ips', out, pick.report);
  }
  throw new ListFormatError(
    `unrecognised JSON layout (top-level members: ${Object.keys(doc).slice(0, 8).join(', ') || 'none'}); see docs/intel-lists.md for the ` +
      `formats umbra reads`,
  );
}

/**
 * Which sections of a multi-section file to import: the requested ones (case-insensitive), else the
 * format's defaults that the file has, else all of them. An unknown requested section is an error.
 */
function sectionPicker(
  names: unknown[],
  options: ParseOptions,
  defaults: string[],
): { has(name: unknown): boolean; report: NonNullable<ParsedList['sections']> } {
  const available = [...new Set(names.filter((n): n is string => typeof n === 'string'))].sort();
  const lower = new Map(available.map((n) => [n.toLowerCase(), n]));
  let chosen: string[];
  const asked = options.sections?.map((s) => s.trim()).filter(Boolean) ?? [];
  if (asked.length > 0 && !asked.some((s) => s.toLowerCase() === 'all')) {
    const unknown = asked.filter((s) => !lower.has(s.toLowerCase()));
    if (unknown.length > 0)
      throw new ListFormatError(`no section ${unknown.map((s) => `'${s}'`).join(', ')} in this file; it has: ${available.join(', ')}`);
    chosen = asked.map((s) => lower.get(s.toLowerCase())!);
  } else if (asked.length === 0 && defaults.some((d) => lower.has(d))) {
    chosen = defaults.filter((d) => lower.has(d)).map((d) => lower.get(d)!);
  } else chosen = available;
  const set = new Set(chosen);
  return { has: (name) => typeof name === 'string' && set.has(name), report: { available, imported: [...set].sort() } };
}
