import {
  credentials as grpcCredentials,
  loadPackageDefinition,
  Metadata,
  type Client,
  type ServiceError,
  type StatusObject,
} from '@grpc/grpc-js';
import { loadProto } from '../../src/proto.ts';

/**
 * A customer-style client of example.v1.ExampleService, built from the published .proto alone.
 * defaults/arrays/objects: every field is present (zero values included) so answers compare whole;
 * bytes as base64 strings, as the HTTP JSON carries them.
 */
const definition = loadProto({
  keepCase: true,
  longs: Number,
  enums: String,
  bytes: String,
  defaults: true,
  arrays: true,
  objects: true,
  oneofs: false,
});
const ServiceCtor = (loadPackageDefinition(definition) as any).example.v1.ExampleService as new (
  target: string,
  creds: unknown,
  options?: object,
) => Client;

export interface UnaryAnswer<T = any> {
  value?: T;
  error?: ServiceError;
  /** Trailing metadata (also on errors), first value per key. */
  trailers: Record<string, string>;
}

export interface GrpcStream<T = any> {
  messages: T[];
  /** Resolves once at least n messages arrived. */
  records(n: number, timeoutMs?: number): Promise<T[]>;
  /** The final status (OK when the server ended the call cleanly). */
  status: Promise<StatusObject>;
  cancel(): void;
}

const firsts = (md: Metadata | undefined): Record<string, string> =>
  Object.fromEntries(Object.entries(md?.getMap() ?? {}).map(([k, v]) => [k, Buffer.isBuffer(v) ? v.toString('base64') : String(v)]));

/** `authority`: the :authority calls carry (default `127.0.0.1:PORT`), as a client that dialled another name sends it. */
export function grpcClient(port: number, options: { tls?: { ca: Buffer; serverName?: string }; authority?: string } = {}) {
  const creds = options.tls ? grpcCredentials.createSsl(options.tls.ca) : grpcCredentials.createInsecure();
  const channelOptions = {
    ...(options.tls?.serverName ? { 'grpc.ssl_target_name_override': options.tls.serverName } : {}),
    ...(options.authority ? { 'grpc.default_authority': options.authority } : {}),
  };
  const client = new ServiceCtor(`127.0.0.1:${port}`, creds, channelOptions) as any;
  const meta = (key?: string) => {
    const md = new Metadata();
    if (key !== undefined) md.set('x-api-key', key);
    return md;
  };
  return {
    raw: client as Client,
    unary<T = any>(method: string, request: object, key?: string): Promise<UnaryAnswer<T>> {
      return new Promise((resolve) => {
        let trailers: Record<string, string> = {};
        const call = client[method](request, meta(key), (error: ServiceError | null, value: T) => {
          // The status event carries the trailers; it fires before or with the callback.
          setImmediate(() => resolve(error ? { error, trailers: { ...trailers, ...firsts(error.metadata) } } : { value, trailers }));
        });
        call.on('status', (s: StatusObject) => (trailers = firsts(s.metadata)));
      });
    },
    stream<T = any>(method: string, key?: string): GrpcStream<T> {
      const call = client[method]({}, meta(key));
      const messages: T[] = [];
      let waiters: Array<() => void> = [];
      call.on('data', (m: T) => {
        messages.push(m);
        const w = waiters;
        waiters = [];
        for (const f of w) f();
      });
      const status = new Promise<StatusObject>((resolve) => {
        call.on('error', () => undefined);
        call.on('status', (s: StatusObject) => resolve(s));
      });
      return {
        messages,
        status,
        cancel: () => call.cancel(),
        records: (n, timeoutMs = 5000) =>
          new Promise((ok, fail) => {
            const timer = setTimeout(() => fail(new Error(`only ${messages.length} of ${n} messages within ${timeoutMs} ms`)), timeoutMs);
            const check = () => {
              if (messages.length >= n) {
                clearTimeout(timer);
                ok(messages.slice(0, n));
              } else waiters.push(check);
            };
            check();
          }),
      };
    },
    close: () => client.close(),
  };
}

export type GrpcTestClient = ReturnType<typeof grpcClient>;

const INSTANT_KEYS = new Set(['timestamp', 'last_seen', 'first_seen', 'created_at', 'imported_at', 'published_at', 'date']);

/**
 * A gRPC answer back in the HTTP JSON's terms, to compare the two: Timestamps → integers in the given
 * unit, Struct/Value → JSON, heatmap rows → arrays; null and unset members dropped (HTTP null ≙ unset).
 */
export function grpcToJson(v: unknown, unit: 's' | 'ms' = 's', key?: string): unknown {
  if (Array.isArray(v)) return v.map((x) => grpcToJson(x, unit));
  if (v === null || typeof v !== 'object') return v;
  const o = v as Record<string, any>;
  if (key !== undefined && INSTANT_KEYS.has(key) && 'seconds' in o)
    return unit === 'ms' ? o.seconds * 1000 + Math.round(o.nanos / 1e6) : o.seconds;
  if (key === 'hour_dow_heatmap') return (v as any[]).map((r) => r.hours);
  if (isValue(o)) return valueToJson(o);
  if ('fields' in o && Object.keys(o).length === 1 && !Array.isArray(o.fields)) return structToJson(o as { fields: Record<string, any> });
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(o)) {
    if (x === null || x === undefined) continue;
    out[k] = k === 'hour_dow_heatmap' ? (x as any[]).map((r) => r.hours) : grpcToJson(x, unit, k);
  }
  return out;
}

const VALUE_KINDS = new Set(['null_value', 'number_value', 'string_value', 'bool_value', 'struct_value', 'list_value']);
const isValue = (o: object) => Object.keys(o).length === 1 && VALUE_KINDS.has(Object.keys(o)[0]!);

/** google.protobuf.Value (one member set, as decoded without oneof virtuals) → JSON. */
function valueToJson(o: Record<string, any>): unknown {
  const kind = Object.keys(o)[0]!;
  switch (kind) {
    case 'null_value':
      return null;
    case 'list_value':
      return (o.list_value.values as any[]).map(valueToJson);
    case 'struct_value':
      return structToJson(o.struct_value);
    default:
      return o[kind];
  }
}

const structToJson = (s: { fields: Record<string, any> }) =>
  Object.fromEntries(Object.entries(s.fields).map(([k, x]) => [k, valueToJson(x)]));

/** HTTP JSON with null members dropped (they are unset fields on gRPC). */
export function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (v === null || typeof v !== 'object') return v;
  return Object.fromEntries(
    Object.entries(v)
      .filter(([, x]) => x !== null && x !== undefined)
      .map(([k, x]) => [k, dropNulls(x)]),
  );
}
