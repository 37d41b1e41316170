import type { HttpHead } from './http-head.ts';

/** Who captured a record: the meta and tunnel members every honeypot record carries. */
export interface SensorIdentity {
  tunnel_id: number;
  pool_id: string | number;
  provider: string;
  proxy_ip: string;
  server: string;
}

/** A captured record and the feed it goes to. */
export interface Captured {
  feed: 'honeypot_http' | 'honeypot_https' | 'honeypot_dns' | 'honeypot_adb';
  record: Record<string, unknown>;
}

/** The `raw` member's limit in the honeypot_http schema (characters; one per byte here). */
export const RAW_LIMIT = 1_048_576;

export interface HttpCapture {
  timestampMs: number;
  domain: string;
  /** The public port the request came to. */
  port: number;
  protocol: 'http' | 'https';
  sourceIp: string;
  head: HttpHead;
  /** The head's bytes and the kept part of the body, as received. */
  raw: Buffer;
}

/**
 * A honeypot_http record. `raw` holds the bytes as ISO-8859-1 (one character per byte) so the exact
 * bytes can be recovered whatever the attacker sent; nothing in it is decoded or interpreted.
 */
export function httpRecord(id: SensorIdentity, c: HttpCapture): Captured {
  return {
    feed: 'honeypot_http',
    record: {
      timestamp: Math.floor(c.timestampMs),
      tunnel_id: id.tunnel_id,
      domain: c.domain,
      port: c.port,
      protocol: c.protocol,
      meta: { proxy_ip: id.proxy_ip, server: id.server, pool_id: id.pool_id, provider: id.provider },
      details: { method: c.head.method, uri: c.head.uri, version: c.head.version, headers: c.head.headers },
      raw: c.raw.subarray(0, RAW_LIMIT).toString('latin1'),
      source_ip: c.sourceIp,
    },
  };
}

/** The members every record of a sensor shares (`tunnel_id`, `meta`), as JSON text made once. */
abstract class IdentityJson {
  protected readonly tunnel: string;
  protected readonly meta: string;

  constructor(id: SensorIdentity) {
    this.tunnel = JSON.stringify(id.tunnel_id);
    this.meta = JSON.stringify({ proxy_ip: id.proxy_ip, server: id.server, pool_id: id.pool_id, provider: id.provider });
  }
}

/**
 * Encodes honeypot_http records straight to their JSON text, the same text as
 * JSON.stringify(httpRecord(...).record): the listener writes one per request, and building the
 * record object only to serialise it was a large part of a request's cost. The members that are the
 * same for every record of a sensor are encoded once.
 */
export class HttpRecordEncoder extends IdentityJson {
  encode(c: HttpCapture): Buffer {
    const q = JSON.stringify;
    const h = c.head;
    return Buffer.from(
      `{"timestamp":${Math.floor(c.timestampMs)},"tunnel_id":${this.tunnel},"domain":${q(c.domain)},"port":${c.port},` +
        `"protocol":"${c.protocol === 'https' ? 'https' : 'http'}","meta":${this.meta},"details":{"method":${q(h.method)},` +
        `"uri":${q(h.uri)},"version":${q(h.version)},"headers":${q(h.headers)}},` +
        `"raw":${q(c.raw.subarray(0, RAW_LIMIT).toString('latin1'))},"source_ip":${q(c.sourceIp)}}`,
    );
  }
}

/** The `raw` member's limit in the honeypot_https schema (base64 characters). */
export const HELLO_RAW_LIMIT = 262_144;

export interface HelloCapture {
  timestampMs: number;
  domain: string;
  port: number;
  sourceIp: string;
  /** The parsed ClientHello with its ja4, or null when the bytes are not one (not TLS, cut short, damaged). */
  details: object | null;
  /** The bytes received: the ClientHello record, or whatever came instead of one. */
  raw: Buffer;
}

/** A honeypot_https record; `raw` is omitted when the bytes would not fit the feed's limit. */
export function httpsRecord(id: SensorIdentity, c: HelloCapture): Captured {
  const raw = c.raw.toString('base64');
  return {
    feed: 'honeypot_https',
    record: {
      timestamp: Math.floor(c.timestampMs),
      tunnel_id: id.tunnel_id,
      domain: c.domain,
      port: c.port,
      protocol: 'https',
      meta: { proxy_ip: id.proxy_ip, server: id.server, pool_id: id.pool_id, provider: id.provider },
      details: c.details,
      ...(raw.length <= HELLO_RAW_LIMIT ? { raw } : {}),
      source_ip: c.sourceIp,
    },
  };
}

export interface DnsCapture {
  timestampMs: number;
  domain: string;
  port: 53 | 853 | 5353;
  protocol: 'udp' | 'tcp';
  sourceIp: string;
  qname: string;
  qtype: string;
}

/**
 * A honeypot_dns record's JSON text, written straight from the capture: the same text as
 * JSON.stringify of dnsRecord's record (tested), without the object per query. The identity's
 * members are encoded once.
 */
export class DnsRecordEncoder extends IdentityJson {
  encode(c: DnsCapture): Buffer {
    const q = JSON.stringify;
    return Buffer.from(
      `{"timestamp":${Math.floor(c.timestampMs)},"tunnel_id":${this.tunnel},"domain":${q(c.domain)},"port":${c.port},` +
        `"protocol":"${c.protocol === 'udp' ? 'udp' : 'tcp'}","meta":${this.meta},"qname":${q(c.qname)},"qtype":${q(c.qtype)},` +
        `"source_ip":${q(c.sourceIp)}}`,
    );
  }
}

/** A honeypot_dns record. */
export function dnsRecord(id: SensorIdentity, c: DnsCapture): Captured {
  return {
    feed: 'honeypot_dns',
    record: {
      timestamp: Math.floor(c.timestampMs),
      tunnel_id: id.tunnel_id,
      domain: c.domain,
      port: c.port,
      protocol: c.protocol,
      meta: { proxy_ip: id.proxy_ip, server: id.server, pool_id: id.pool_id, provider: id.provider },
      qname: c.qname,
      qtype: c.qtype,
      source_ip: c.sourceIp,
    },
  };
}
