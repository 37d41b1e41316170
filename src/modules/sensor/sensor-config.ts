import { z } from 'zod';
import { normalizeDomain } from '../../lib/domain-name.ts';
import { parseIp } from '../../lib/ip-address.ts';

/**
 * The configuration of `umbra sensor` (docs/sensors.md, deploy/sensor.sample.yaml). Every member has a
 * default except what only the operator can know: the sensor's public address and its decoy domains.
 * Unknown members are refused so a typo in a YAML file is named instead of silently ignored.
 */

const port = z.number().int().min(0).max(65_535);
const publicPort = z.number().int().min(1).max(65_535);
const positive = z.number().int().min(1);
/** A listener's memory share at least: one connection at the largest per-connection limits (an ADB push) fits. */
export const MIN_LISTENER_BUFFER = 4 * 1_048_576;
const bindAddress = z.string().refine((s) => Boolean(parseIp(s)), 'must be an IPv4 or IPv6 address (0.0.0.0 or :: for every interface)');

const domain = z.string().transform((s, ctx) => {
  const d = normalizeDomain(s);
  if (!d.ok) {
    ctx.addIssue({ code: 'custom', message: d.message });
    return z.NEVER;
  }
  return d.domain;
});

/** What the HTTP listener answers every request with. */
export const DEFAULT_DECOY_BODY =
  '<!DOCTYPE html>\n<html>\n<head><title>Welcome to nginx!</title></head>\n<body>\n<h1>Welcome to nginx!</h1>\n' +
  '<p>If you see this page, the nginx web server is successfully installed and working.</p>\n</body>\n</html>\n';

const decoy = z
  .object({
    status: z.number().int().min(100).max(599).default(200),
    /** Sent as given; Content-Length, Date and Connection are set by the listener. */
    headers: z
      .record(
        z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/, 'must be an HTTP header name'),
        z.string().regex(/^[\t\x20-\x7e]*$/, 'must be printable ASCII'),
      )
      .default({
        Server: 'nginx/1.24.0',
        'Content-Type': 'text/html',
      }),
    body: z.string().default(DEFAULT_DECOY_BODY),
  })
  .strict();

/** What every TCP listener has: where it binds, the port records carry, and its connection limits. */
const tcpListenerShape = {
  /** A name for /health and /metrics; `<protocol>-<public_port>` by default. */
  name: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/)
    .optional(),
  bind: bindAddress.default('0.0.0.0'),
  port,
  /** The port attackers reach (a port forward often maps 80 to a high port); records carry it. */
  public_port: publicPort.optional(),
  max_connections: positive.default(1024),
  max_connections_per_source: positive.default(16),
  /** A connection that sends nothing for this long is closed (and what it sent is recorded). */
  idle_timeout_ms: positive.default(10_000),
  /**
   * This listener's share of `limits.max_buffered_bytes`: the bytes its connections in progress and
   * records on their way to the spool may hold. Unset: an equal part of what the listeners that set
   * one leave over.
   */
  max_buffered_bytes: z.number().int().min(MIN_LISTENER_BUFFER).optional(),
};

/** How HTTP requests are read and answered: on an HTTP port, and inside TLS after the handshake. */
const httpShape = {
  /** The whole exchange of one request, head to answer, at most this long. */
  request_timeout_ms: positive.default(30_000),
  /** A request head longer than this is recorded as far as it came, answered 431 and closed. */
  // The caps keep a record's JSON line under the server's 2 MiB line limit even when every kept byte
  // is a control character (escaped as six characters).
  max_head_bytes: z.number().int().min(256).max(262_144).default(65_536),
  /** Body bytes kept in `raw`; a longer (or chunked) body is cut there, answered and its connection closed. */
  max_body_bytes: z.number().int().min(0).max(65_536).default(65_536),
  /** Requests served on one keep-alive connection before it is closed. */
  max_requests_per_connection: positive.default(100),
  decoy: decoy.prefault({}),
};

const httpListener = z.object({ protocol: z.literal('http'), ...tcpListenerShape, ...httpShape }).strict();

const tlsListener = z
  .object({
    protocol: z.literal('tls'),
    ...tcpListenerShape,
    /**
     * handshake: complete it with a self-signed certificate for the SNI (under a decoy domain, else
     * the first decoy domain) and record the HTTP requests inside as honeypot_http with protocol
     * https; close: record the ClientHello and close.
     */
    after_hello: z.enum(['handshake', 'close']).default('handshake'),
    /** A ClientHello record longer than this (TLS allows 16 KiB plus its header) is recorded cut and closed. */
    max_hello_bytes: z.number().int().min(512).max(65_536).default(16_389),
    ...httpShape,
  })
  .strict();

const dnsListener = z
  .object({
    protocol: z.literal('dns'),
    ...tcpListenerShape,
    /**
     * DNS over TLS (RFC 7858; public port 853): TCP only, the handshake done with a self-signed
     * certificate (as on a TLS listener), then the messages of DNS over TCP. Off: UDP and TCP.
     */
    tls: z.boolean().default(false),
    /** The port records carry must be one the honeypot_dns feed allows: 53, 853 or 5353. */
    public_port: z.union([z.literal(53), z.literal(853), z.literal(5353)]).optional(),
    /** nxdomain: every name is answered NXDOMAIN; decoy: names under a decoy domain get the decoy addresses. */
    answer: z.enum(['nxdomain', 'decoy']).default('nxdomain'),
    decoy_ipv4: z
      .string()
      .refine((s) => parseIp(s)?.version === 4, 'must be an IPv4 address')
      .optional(),
    decoy_ipv6: z
      .string()
      .refine((s) => parseIp(s)?.version === 6, 'must be an IPv6 address')
      .optional(),
    ttl: z.number().int().min(0).max(86_400).default(300),
    /** A UDP answer is at most this many times the size of its query (else an empty truncated one). */
    max_amplification: z.number().min(1).max(4).default(2),
    /** Queries per second one source address is answered (and recorded); the rest are dropped. */
    rate_per_source: positive.default(20),
    burst_per_source: positive.default(40),
  })
  .strict()
  .refine((l) => [53, 853, 5353].includes(l.public_port ?? l.port), {
    message: 'a DNS listener needs public_port 53, 853 or 5353 (the honeypot_dns feed accepts no other)',
    path: ['public_port'],
  });

const adbListener = z
  .object({
    protocol: z.literal('adb'),
    ...tcpListenerShape,
    /**
     * Bytes of a pushed file kept in its record (base64 of them must fit the feed's 1 MiB command);
     * the record's hash is of the kept bytes.
     */
    max_push_bytes: z.number().int().min(0).max(786_432).default(786_432),
  })
  .strict();

export const sensorConfigSchema = z
  .object({
    /** The umbra server records go to (its HTTP origin). */
    server: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8080'),
    /** A file holding the operator token; UMBRA_OPERATOR_TOKEN is used when unset. */
    token_file: z.string().min(1).optional(),
    identity: z
      .object({
        tunnel_id: z.number().int().min(0).default(0),
        pool_id: z.union([z.number().int(), z.string().min(1).max(128)]).default('default'),
        provider: z.string().min(1).max(128).default('SELF_HOSTED'),
        /** The public address attackers reach this sensor at. */
        proxy_ip: z.string().refine((s) => Boolean(parseIp(s)), 'must be an IPv4 or IPv6 address'),
        /** The sensor host's name; the machine's host name when unset. */
        server: z.string().min(1).max(256).optional(),
      })
      .strict(),
    /** The decoy domains this sensor answers for; the first is the domain of requests naming none of them. */
    domains: z.array(domain).min(1).max(10_000),
    listeners: z
      .array(z.discriminatedUnion('protocol', [httpListener, tlsListener, dnsListener, adbListener]))
      .min(1)
      .max(64),
    spool: z
      .object({
        dir: z.string().min(1).default('./sensor-spool'),
        /** Records captured while the spool holds this much are dropped (and counted). */
        max_bytes: z
          .number()
          .int()
          .min(1_048_576)
          .default(256 * 1_048_576),
        /** A spool file is closed and a new one started past this size; uploaded files are deleted. */
        segment_bytes: z
          .number()
          .int()
          .min(4096)
          .default(8 * 1_048_576),
      })
      .strict()
      .prefault({}),
    upload: z
      .object({
        /**
         * Records per POST at most. Larger batches upload faster under a flood (5,000: about 1.5 times
         * the records per second of 500 in the sensor bench), but a server on the same machine then
         * takes the CPU the listeners need (the bench's listener fell from 0.77 to 0.42 of bare).
         */
        batch_records: z.number().int().min(1).max(5000).default(500),
        /** Bytes of records per POST at most (one oversized record still goes alone). */
        batch_bytes: z
          .number()
          .int()
          .min(1024)
          .default(4 * 1_048_576),
        /** How long a new record waits for others to share its POST. */
        linger_ms: z.number().int().min(0).max(60_000).default(200),
        /** A POST not answered within this is abandoned and retried with backoff. */
        timeout_ms: positive.default(30_000),
      })
      .strict()
      .prefault({}),
    limits: z
      .object({
        /**
         * Bytes all listeners together may hold for work in progress (partial requests, hellos, DNS
         * and ADB messages, pushed files, records not yet in the spool). Split into fixed listener
         * shares, so a flood that fills one listener's share leaves the others theirs.
         */
        max_buffered_bytes: z
          .number()
          .int()
          .min(MIN_LISTENER_BUFFER)
          .default(64 * 1_048_576),
      })
      .strict()
      .prefault({}),
    health: z
      .object({
        bind: bindAddress.default('127.0.0.1'),
        port: port.default(9465),
      })
      .strict()
      .prefault({}),
  })
  .strict();

export type SensorConfig = z.output<typeof sensorConfigSchema>;
export type HttpListenerConfig = z.output<typeof httpListener>;
export type TlsListenerConfig = z.output<typeof tlsListener>;
export type DnsListenerConfig = z.output<typeof dnsListener>;
export type AdbListenerConfig = z.output<typeof adbListener>;
export type ListenerConfig = HttpListenerConfig | TlsListenerConfig | DnsListenerConfig | AdbListenerConfig;
/** What the HTTP reader needs of a listener: both kinds carry it. */
export type HttpHandling = Omit<HttpListenerConfig, 'protocol'>;

/** Config problems, one line each (`listeners.0.port: ...`), for the CLI's usage error. */
export class SensorConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid sensor configuration:\n  ${problems.join('\n  ')}`);
  }
}

/** Checks a config value (parsed YAML with flags applied) and fills in the defaults. */
export function parseSensorConfig(value: unknown): SensorConfig {
  const r = sensorConfigSchema.safeParse(value);
  if (!r.success) throw new SensorConfigError(r.error.issues.map((i) => `${i.path.join('.') || 'config'}: ${i.message}`));
  const names = new Set<string>();
  const problems: string[] = [];
  for (const [i, l] of r.data.listeners.entries()) {
    const name = listenerName(l as ListenerConfig);
    if (names.has(name)) problems.push(`listeners.${i}.name: '${name}' is used by another listener; give each a name of its own`);
    names.add(name);
  }
  const shares = bufferShares(r.data.limits.max_buffered_bytes, r.data.listeners as ListenerConfig[]);
  if (typeof shares === 'string') problems.push(shares);
  if (problems.length) throw new SensorConfigError(problems);
  for (const [i, l] of r.data.listeners.entries()) l.max_buffered_bytes = (shares as number[])[i];
  return r.data;
}

/**
 * Each listener's share of the memory budget: its own max_buffered_bytes, or an equal part of what
 * those leave over; a problem line when the shares do not fit the total.
 */
function bufferShares(total: number, listeners: ListenerConfig[]): number[] | string {
  const fixed = listeners.reduce((n, l) => n + (l.max_buffered_bytes ?? 0), 0);
  const open = listeners.filter((l) => l.max_buffered_bytes === undefined).length;
  if (fixed > total) return `limits.max_buffered_bytes: ${total} is less than the listeners' max_buffered_bytes together (${fixed})`;
  const part = open ? Math.floor((total - fixed) / open) : 0;
  if (open && part < MIN_LISTENER_BUFFER)
    return `limits.max_buffered_bytes: ${total} leaves ${part} bytes to each listener without max_buffered_bytes; each needs at least ${MIN_LISTENER_BUFFER}`;
  return listeners.map((l) => l.max_buffered_bytes ?? part);
}

export function listenerName(l: ListenerConfig): string {
  const kind = l.protocol === 'dns' && l.tls ? 'dot' : l.protocol;
  return l.name ?? `${kind}-${l.public_port ?? l.port}`;
}

/** The port records carry: the public one when a forward maps it, else the bound one. */
export function publicPortOf(l: ListenerConfig, boundPort: number): number {
  return l.public_port ?? boundPort;
}
