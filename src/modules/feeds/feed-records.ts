import { createHash } from 'node:crypto';
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { normalizeDomain } from '../domains/domain-name.ts';
import { parseIp, type ParsedIp } from '../lookup/ip-address.ts';
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
  | 'too_long';

export type RecordCheck =
  | { ok: true; record: FeedRecord; /** canonical JSON, no newline */ line: string; timeMs: number }
  | { ok: false; reason: RejectReason; field: string; message: string };

/** Records stamped further ahead of the server clock than this are refused (sensor clock skew allowed). */
export const MAX_FUTURE_MS = 10 * 60_000;

const fail = (reason: RejectReason, field: string, message: string): RecordCheck => ({ ok: false, reason, field, message });

function fromAjv(feed: FeedDef, e: ErrorObject): RecordCheck {
  const path = e.instancePath.split('/').filter(Boolean).join('.');
  const params = e.params as { missingProperty?: string; additionalProperty?: string };
  if (e.keyword === 'required') return fail('missing_field', path ? `${path}.${params.missingProperty}` : params.missingProperty!, 'is required');
  if (e.keyword === 'additionalProperties') {
    const field = path ? `${path}.${params.additionalProperty}` : params.additionalProperty!;
    return fail('unknown_field', field, `is not a member of ${feed.id} records`);
  }
  const field = path || 'record';
  if (e.keyword === 'type') return fail('wrong_type', field, e.message ?? 'has the wrong type');
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

  /** Parses one NDJSON line and checks it. */
  checkLine(feed: FeedDef, text: string): RecordCheck {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      return fail('invalid_json', 'record', `is not valid JSON (${(e as Error).message})`);
    }
    return this.check(feed, value);
  }

  check(feed: FeedDef, value: unknown): RecordCheck {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('not_an_object', 'record', 'must be a JSON object');
    const validate = this.validators.get(feed.id)!;
    if (!validate(value)) return fromAjv(feed, validate.errors![0]!);
    const record = value as FeedRecord;
    const timeMs = recordTimeMs(feed, record);
    if (timeMs > this.now() + MAX_FUTURE_MS) return fail('future_timestamp', 'timestamp', `is more than ${MAX_FUTURE_MS / 60_000} minutes ahead of the server clock`);
    const semantic = checkSemantics(feed, record);
    if (semantic) return semantic;
    return { ok: true, record, line: JSON.stringify(record), timeMs };
  }
}

function canonicalIp(record: FeedRecord, field: string): ParsedIp | RecordCheck {
  const ip = parseIp(record[field] as string);
  if (!ip) return fail('invalid_ip', field, 'must be a single IPv4 or IPv6 address');
  record[field] = ip.text;
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

function checkSemantics(feed: FeedDef, record: FeedRecord): RecordCheck | undefined {
  const parsed: Record<string, ParsedIp> = {};
  for (const field of feed.ipFields) {
    if (record[field] === undefined) continue;
    const ip = canonicalIp(record, field);
    if (isCheck(ip)) return ip;
    parsed[field] = ip;
  }
  switch (feed.id) {
    case 'anonymizers': {
      const order = compareIp(parsed.range_start!, parsed.range_end!);
      if (Number.isNaN(order)) return fail('invalid_value', 'range_end', 'must be of the same IP version as range_start');
      if (order > 0) return fail('invalid_value', 'range_end', 'must not be below range_start');
      return undefined;
    }
    case 'torrents': {
      record.info_hash = (record.info_hash as string).toLowerCase();
      const peers = record.peers as Array<{ ip: string }>;
      for (let i = 0; i < peers.length; i++) {
        const ip = parseIp(peers[i]!.ip);
        if (!ip) return fail('invalid_ip', `peers.${i}.ip`, 'must be a single IPv4 or IPv6 address');
        peers[i]!.ip = ip.text;
      }
      return undefined;
    }
    case 'honeypot_http':
    case 'honeypot_https':
    case 'honeypot_dns': {
      const name = normalizeDomain(record.domain as string);
      if (!name.ok) return fail('invalid_domain', 'domain', name.message);
      record.domain = name.domain;
      if (feed.id === 'honeypot_dns') record.qname = (record.qname as string).toLowerCase().replace(/\.$/, '');
      return undefined;
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
