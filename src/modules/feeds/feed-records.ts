import { createHash } from 'node:crypto';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { normalizeDomain } from '../../lib/domain-name.ts';
import { parseIp, type ParsedIp } from '../../lib/ip-address.ts';
import { canonicalProvider } from '../providers/provider-registry.ts';
import { FEED_LIST, recordTimeMs, type FeedDef, type FeedId } from './feed-catalog.ts';

/** One validated record, canonical: IPs in RFC 5952 form, domains lower-case Punycode, hashes lower-case. */
export type FeedRecord = Record<string, unknown> & { timestamp: number };

/** Why a record was refused; the ingestion summary counts records by these. */
export type RejectReason =
  | 'invalid_json'
  | 'not_an_object'
  | 'missing_field'
  | 'unknown_field'
  | 'wrong_type'
  | 'invalid_value'
  | 'future_timestamp'
  | 'invalid_ip'
  | 'invalid_domain'
  | 'hash_mismatch'
  | 'too_long'
  /** A CSV row that cannot be read as CSV (a quote never closed, a stray quote). */
  | 'invalid_csv';

export type RecordCheck =
  | { ok: true; record: FeedRecord /** canonical JSON, no newline */; line: string; timeMs: number }
  | { ok: false; reason: RejectReason; field: string; message: string };

/** Records stamped further ahead of the server clock than this are refused (sensor clock skew allowed). */
export const MAX_FUTURE_MS = 10 * 60_000;

const fail = (reason: RejectReason, field: string, message: string): RecordCheck => ({ ok: false, reason, field, message });

const TYPE_NOUNS: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
};

/** The offending value as the sensor sent it, shortened: `"16276"` (a string where an integer belongs). */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}

function fromAjv(feed: FeedDef, e: ErrorObject): RecordCheck {
  const path = e.instancePath.split('/').filter(Boolean).join('.');
  const params = e.params as { missingProperty?: string; additionalProperty?: string };
  if (e.keyword === 'required')
    return fail('missing_field', path ? `${path}.${params.missingProperty}` : params.missingProperty!, 'is required');
  if (e.keyword === 'additionalProperties') {
    const field = path ? `${path}.${params.additionalProperty}` : params.additionalProperty!;
    return fail('unknown_field', field, `is not a member of ${feed.id} records`);
  }
  const field = path || 'record';
  if (e.keyword === 'type')
    return fail('wrong_type', field, `must be ${TYPE_NOUNS[String(e.params.type)] ?? e.params.type}, not ${shown(e.data)}`);
  if (field === 'timestamp') {
    const unit = feed.unit === 'ms' ? 'Unix milliseconds' : 'Unix seconds';
    return fail('invalid_value', field, `must be an integer in ${unit} (the ${feed.id} feed's unit) between the years 2000 and 2100`);
  }
  const description = (e.parentSchema as { description?: string } | undefined)?.description;
  const message = e.keyword === 'pattern' && description ? `must be ${description}` : (e.message ?? 'is invalid');
  return fail('invalid_value', field, message);
}

/**
 * Validates and canonicalises feed records against the catalog's schemas. Schema checks are compiled
 * once per feed (ajv); IP and domain syntax, range order and the adb command hash are checked here.
 */
export class RecordValidator {
  private readonly validators = new Map<FeedId, ValidateFunction>();

  constructor(private readonly now: () => number) {
    const ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: false, verbose: true });
    for (const feed of FEED_LIST) this.validators.set(feed.id, ajv.compile(feed.schema));
  }

  /**
   * Parses one NDJSON line and checks it. For flat records (no nested objects), when canonicalisation
   * changed nothing, every number in the text is already a plain integer and no member is repeated,
   * the sensor's own text is kept as the stored line: it denotes exactly the same JSON value, and
   * re-serialising it was a third of the cost of ingestion.
   */
  checkLine(feed: FeedDef, text: string): RecordCheck {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return fail('invalid_json', 'record', `is not valid JSON (${(e as Error).message})`);
    }
    const members = feed.csv ? plainJsonMembers(text) : -1;
    const reusable = members >= 0 && typeof value === 'object' && value !== null && Object.keys(value).length === members;
    return this.check(feed, value, reusable ? text : undefined);
  }

  check(feed: FeedDef, value: unknown, text?: string): RecordCheck {
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      return fail('not_an_object', 'record', 'must be a JSON object');
    const validate = this.validators.get(feed.id)!;
    if (!validate(value)) return fromAjv(feed, validate.errors![0]!);
    const record = value as FeedRecord;
    if (record.simulated !== undefined)
      return fail('invalid_value', 'simulated', "is set only by umbra's demo simulator, never by an ingestion client");
    const timeMs = recordTimeMs(feed, record);
    if (timeMs > this.now() + MAX_FUTURE_MS)
      return fail('future_timestamp', 'timestamp', `is more than ${MAX_FUTURE_MS / 60_000} minutes ahead of the server clock`);
    const semantic = checkSemantics(feed, record);
    if (semantic === CHANGED) return { ok: true, record, line: JSON.stringify(record), timeMs };
    if (semantic) return semantic;
    return { ok: true, record, line: text ?? JSON.stringify(record), timeMs };
  }
}

/** checkSemantics' answer for a valid record that canonicalisation modified (so it must be re-serialised). */
const CHANGED = 'changed' as const;

/**
 * For a JSON object text with no white space at its ends, that writes every number outside strings as a
 * plain integer (no fraction, exponent or -0): the number of members (colons outside strings), so a
 * caller can tell a repeated member. -1 when the text is not of that form.
 */
export function plainJsonMembers(text: string): number {
  const n = text.length;
  if (n === 0 || text.charCodeAt(0) !== 123 || text.charCodeAt(n - 1) !== 125) return -1;
  let inString = false;
  let members = 0;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92)
        i++; // skip the escaped character
      else if (c === 34) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 58) members++;
    else if (c === 46 || c === 101 || c === 69)
      return -1; // '.', 'e', 'E' in a number
    else if (c === 45 && text.charCodeAt(i + 1) === 48) return -1; // '-0…'
  }
  return members;
}

function canonicalIp(record: FeedRecord, field: string): ParsedIp | RecordCheck {
  const given = record[field] as string;
  const ip = parseIp(given);
  if (!ip) return fail('invalid_ip', field, 'must be a single IPv4 or IPv6 address');
  if (ip.text !== given) record[field] = ip.text;
  return ip;
}

const isCheck = (x: ParsedIp | RecordCheck): x is RecordCheck => 'ok' in x;

/** Compares two parsed addresses of the same version; negative when a < b. */
function compareIp(a: ParsedIp, b: ParsedIp): number {
  if (a.version === 4 && b.version === 4) return a.v4 - b.v4;
  if (a.version === 6 && b.version === 6) {
    for (let i = 0; i < 4; i++) if (a.v6[i] !== b.v6[i]) return a.v6[i]! - b.v6[i]!;
    return 0;
  }
  return Number.NaN;
}

/** undefined: valid and unchanged; CHANGED: valid, canonicalised in place; else the refusal. */
function checkSemantics(feed: FeedDef, record: FeedRecord): RecordCheck | typeof CHANGED | undefined {
  const parsed: Record<string, ParsedIp> = {};
  let changed = false;
  for (const field of feed.ipFields) {
    const given = record[field];
    if (given === undefined) continue;
    const ip = canonicalIp(record, field);
    if (isCheck(ip)) return ip;
    parsed[field] = ip;
    if (ip.text !== given) changed = true;
  }
  const outcome = checkFeedRules(feed, record, parsed);
  return outcome ?? (changed ? CHANGED : undefined);
}

/**
 * One tag per provider (provider-registry.ts): SMARTPROXY_MOBILE is stored as SMARTPROXY with variant
 * MOBILE, BRIGHT_DATA as BRIGHTDATA. A variant the record states itself wins over the tag's suffix.
 */
function canonicalTag(record: FeedRecord): typeof CHANGED | undefined {
  const given = record.provider as string;
  const c = canonicalProvider(given);
  if (c.provider === given) return undefined;
  record.provider = c.provider;
  if (c.variant && record.variant === undefined) record.variant = c.variant;
  return CHANGED;
}

function checkFeedRules(feed: FeedDef, record: FeedRecord, parsed: Record<string, ParsedIp>): RecordCheck | typeof CHANGED | undefined {
  switch (feed.id) {
    case 'proxies':
    case 'ja4t':
      return canonicalTag(record);
    case 'anonymizers': {
      const order = compareIp(parsed.range_start!, parsed.range_end!);
      if (Number.isNaN(order)) return fail('invalid_value', 'range_end', 'must be of the same IP version as range_start');
      if (order > 0) return fail('invalid_value', 'range_end', 'must not be below range_start');
      return canonicalTag(record);
    }
    case 'torrents': {
      const hash = record.info_hash as string;
      let changed = hash !== (record.info_hash = hash.toLowerCase());
      const peers = record.peers as Array<{ ip: string }>;
      for (let i = 0; i < peers.length; i++) {
        const ip = parseIp(peers[i]!.ip);
        if (!ip) return fail('invalid_ip', `peers.${i}.ip`, 'must be a single IPv4 or IPv6 address');
        if (ip.text !== peers[i]!.ip) {
          peers[i]!.ip = ip.text;
          changed = true;
        }
      }
      return changed ? CHANGED : undefined;
    }
    case 'honeypot_http':
    case 'honeypot_https':
    case 'honeypot_dns': {
      const given = record.domain as string;
      const name = normalizeDomain(given);
      if (!name.ok) return fail('invalid_domain', 'domain', name.message);
      let changed = name.domain !== given;
      record.domain = name.domain;
      if (feed.id === 'honeypot_dns') {
        const qname = record.qname as string;
        record.qname = qname.toLowerCase().replace(/\.$/, '');
        changed ||= record.qname !== qname;
      }
      return changed ? CHANGED : undefined;
    }
    case 'honeypot_adb': {
      const raw = Buffer.from(record.command as string, 'base64');
      const hash = createHash('sha256').update(raw).digest('hex');
      if (hash !== record.hash) return fail('hash_mismatch', 'hash', 'must be the hex SHA-256 of the base64-decoded command bytes');
      return undefined;
    }
    default:
      return undefined;
  }
}
