import { createServer, maxHeaderSize, validateHeaderValue, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyServerFactory } from 'fastify';
import type { Logger } from 'pino';
import { isPromise } from '../lib/maybe-promise.ts';
import { requestIdFrom } from '../lib/request-id.ts';
import type { RateDecision } from '../modules/ratelimit/rate-limiter.ts';
import type { Admission, Admit } from '../operation-guard.ts';
import { frozenPartsSerializer, type Serialize } from './frozen-parts-json.ts';
import { PROBLEM_CONTENT_TYPE, toProblem } from './problem.ts';
import { RawHttp1, type RawHead } from './raw-http1.ts';
import type { RecordResponse } from './response-log.ts';
import type { AnsweredRouteSpec, OperationReply } from './route-spec.ts';

type Validate = ((data: unknown) => boolean) | undefined;

interface Compiled {
  params: Validate;
  query: Validate;
  /** Response serializers by status, compiled from the route's response schemas. */
  serializers: Map<number, Serialize>;
}

interface Matched {
  params: Record<string, unknown>;
  searchParams: Record<string, unknown>;
}

/** A path segment that needs no decoding and is not too long for the router (maxParamLength): an address as written. */
const PLAIN_SEGMENT = /^[0-9A-Za-z.:]{1,64}$/;

/** Where an answer goes: node's ServerResponse, or a connection the raw HTTP/1.1 reader holds. */
interface Sink {
  /** Writes the answer; returns the error and writes nothing when a header value is refused. */
  write(status: number, headers: string[], payload: string): Error | undefined;
  /** Whether a refused answer can still be replaced by a 500 problem. */
  canRetry(): boolean;
  abort(e: Error): void;
}

class NodeSink implements Sink {
  constructor(private readonly res: ServerResponse) {}
  write(status: number, headers: string[], payload: string): Error | undefined {
    try {
      this.res.writeHead(status, headers);
    } catch (e) {
      return e as Error;
    }
    this.res.end(payload);
    return undefined;
  }
  canRetry(): boolean {
    return !this.res.headersSent;
  }
  abort(e: Error): void {
    this.res.destroy(e);
  }
}

/** node's test for a header value it refuses (checkInvalidHeaderChar). */
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;

class RawSink implements Sink {
  constructor(private readonly reply: (status: number, headers: string[], body: string) => void) {}
  write(status: number, headers: string[], payload: string): Error | undefined {
    // The checks ServerResponse.writeHead makes of values; names here are the code's own.
    for (let i = 1; i < headers.length; i += 2) {
      if (INVALID_HEADER_CHAR.test(headers[i]!)) {
        try {
          validateHeaderValue(headers[i - 1]!, headers[i] as string);
        } catch (e) {
          return e as Error;
        }
      }
    }
    this.reply(status, headers, payload);
    return undefined;
  }
  canRetry(): boolean {
    return true;
  }
  abort(): void {}
}

/** One request in flight on the fast path. */
interface Exchange {
  method: string;
  url: string;
  sink: Sink;
  reqId: string;
  /** performance.now() when the request reached the server's listener. */
  start: number;
  rate: RateDecision | undefined;
}

export interface FastRouteOptions {
  /** e.g. /api/v4; the route's operation path follows it. */
  prefix: string;
  admit: Admit;
  record: RecordResponse;
  logger: Logger;
  /** true once the app has begun to close: every request then goes to fastify (its 503 while draining). */
  closing: () => boolean;
}

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * Serves one authenticated GET route (path `<static>/:param`, e.g. /api/v4/lookup/ip/:ip_address)
 * straight on node:http, in front of fastify's request pipeline, which costs about as much CPU per
 * request as everything else umbra does for a lookup (see docs/architecture.md).
 *
 * It changes no behaviour: the route is found by fastify's own router (`findRoute`, so paths and
 * percent-encoded parameters are decoded exactly as fastify would; a plain segment with no query,
 * which the router would take as it is, is taken as it is without asking it), params and query are validated
 * and the body serialized by the compilers fastify uses for the route, the caller is admitted by the
 * same admission as fastify's guard, the answer comes from the route's own Answer function, errors
 * become the same problem+json through toProblem, and the same recorder counts and logs the request.
 * Whatever it does not recognise, or whose input fails validation, it hands to fastify untouched
 * (serve returns false), so fastify answers those exactly as before.
 */
export class FastRoute {
  private readonly staticPart: string;
  private readonly param: string;
  private compiled: Compiled | undefined;
  private app: FastifyInstance | undefined;

  constructor(
    private readonly spec: AnsweredRouteSpec,
    private readonly options: FastRouteOptions,
  ) {
    const url = options.prefix + spec.operation.path;
    const colon = url.indexOf(':');
    if (spec.operation.method !== 'GET' || colon === -1 || url.lastIndexOf('/') !== colon - 1 || url.indexOf(':', colon + 1) !== -1) {
      throw new Error(`fast path needs a GET route ending in one /:param, got ${spec.operation.method} ${url}`);
    }
    this.staticPart = url.slice(0, colon);
    this.param = url.slice(colon + 1);
  }

  /** Compiles with the compilers fastify used for the route; call once fastify is ready. Until then every request goes to fastify. */
  compile(app: FastifyInstance): void {
    const validator = app.validatorCompiler;
    const serializer = app.serializerCompiler;
    if (!validator || !serializer) throw new Error('fast path: fastify has no compilers yet (call compile() on ready)');
    const url = this.options.prefix + this.spec.operation.path;
    const { params, querystring, response } = this.spec.schema as {
      params?: unknown;
      querystring?: unknown;
      response?: Record<string, unknown>;
    };
    const validate = (schema: unknown, httpPart: string): Validate =>
      schema === undefined ? undefined : (validator({ schema, method: 'GET', url, httpPart }) as Validate);
    const serializers = new Map<number, Serialize>();
    // Answers only: problems are written with JSON.stringify (fail), and their schemas are documentation.
    for (const [status, schema] of Object.entries(response ?? {}))
      if (Number(status) < 300) serializers.set(Number(status), serializer({ schema, method: 'GET', url, httpStatus: status }));
    const whole = serializers.get(200);
    if (this.spec.okBody !== undefined && whole !== undefined) {
      serializers.set(
        200,
        frozenPartsSerializer(this.spec.okBody, (schema) => serializer({ schema, method: 'GET', url, httpStatus: '200' }), whole),
      );
    }
    this.compiled = { params: validate(params, 'params'), query: validate(querystring, 'querystring'), serializers };
    this.app = app;
  }

  /**
   * Serves the request when it is exactly this route and its input is valid; false when it is anything
   * else, for fastify to handle. Never throws: a failure becomes a problem+json answer.
   */
  serve(req: IncomingMessage, res: ServerResponse): boolean {
    const url = req.url!;
    if (!url.startsWith(this.staticPart)) return false;
    const method = req.method!;
    if ((method !== 'GET' && method !== 'HEAD') || this.compiled === undefined || this.options.closing()) return false;
    const found = this.match(url, method);
    if (found === null) return false;
    const { params, query } = this.compiled;
    // Invalid input goes to fastify, which answers the same 400 after the same admission.
    if ((params !== undefined && !params(found.params)) || (query !== undefined && !query(found.searchParams))) return false;

    const x: Exchange = {
      method,
      url,
      sink: new NodeSink(res),
      reqId: requestIdFrom(req.headers['x-request-id']),
      start: performance.now(),
      rate: undefined,
    };
    this.run(x, req.headers['x-api-key'], found.params, found.searchParams);
    return true;
  }

  /** The path this route's URLs start with (e.g. /api/v4/lookup/ip/). */
  get prefix(): string {
    return this.staticPart;
  }

  /**
   * serve() for a request the raw HTTP/1.1 reader took off the socket (http/raw-http1.ts): a GET of
   * exactly this path with one plain segment and no query. The same checks, admission, answer,
   * serializer, problems and recorder; false hands the request to node's server and so to serve().
   */
  serveRaw(head: RawHead, reply: (status: number, headers: string[], body: string) => void): boolean {
    if (this.compiled === undefined || this.options.closing()) return false;
    const segment = head.url.slice(this.staticPart.length);
    if (!PLAIN_SEGMENT.test(segment)) return false;
    const params = { [this.param]: segment };
    const query = {};
    if (
      (this.compiled.params !== undefined && !this.compiled.params(params)) ||
      (this.compiled.query !== undefined && !this.compiled.query(query))
    )
      return false;
    const x: Exchange = {
      method: 'GET',
      url: head.url,
      sink: new RawSink(reply),
      reqId: requestIdFrom(head.requestId),
      start: performance.now(),
      rate: undefined,
    };
    this.run(x, head.apiKey, params, query);
    return true;
  }

  /** Admits the caller, then answers. */
  private run(x: Exchange, apiKey: string | string[] | undefined, params: unknown, query: unknown): void {
    let admission: ReturnType<Admit>;
    try {
      admission = this.options.admit(apiKey);
    } catch (e) {
      return this.fail(x, e);
    }
    if (isPromise(admission))
      admission.then(
        (a) => this.answer(x, a, params, query),
        (e) => this.fail(x, e),
      );
    else this.answer(x, admission, params, query);
  }

  /**
   * The route's params and query for a URL that starts with the static part, or null when it is some
   * other path. A plain segment (letters, digits, dots and colons, as addresses are written, and no
   * query) is its own param as it stands: the router would find the same, with nothing to decode. Any
   * other URL goes through fastify's router (findRoute), which decodes it as fastify's route would.
   */
  private match(url: string, method: string): Matched | null {
    const rest = url.slice(this.staticPart.length);
    if (PLAIN_SEGMENT.test(rest)) return { params: { [this.param]: rest }, searchParams: {} };
    // One raw path segment: a further '/' (even a trailing one) is some other path, left to fastify.
    const slash = rest.indexOf('/');
    if (slash !== -1) {
      const query = rest.indexOf('?');
      const hash = rest.indexOf('#');
      if ((query === -1 || slash < query) && (hash === -1 || slash < hash)) return null;
    }
    const found = this.app!.findRoute({ method, url }) as Matched | null;
    return found === null || typeof found.params[this.param] !== 'string' ? null : found;
  }

  private answer(x: Exchange, a: Admission, params: unknown, query: unknown): void {
    x.rate = a.rate;
    if (!a.ok) return this.fail(x, a.error);
    let answered: ReturnType<AnsweredRouteSpec['answer']>;
    try {
      answered = this.spec.answer(a.caller, params, query);
    } catch (e) {
      return this.fail(x, e);
    }
    if (isPromise(answered))
      answered.then(
        (r) => this.send(x, r),
        (e) => this.fail(x, e),
      );
    else this.send(x, answered);
  }

  private send(x: Exchange, r: OperationReply): void {
    let payload: string;
    try {
      const serialize = this.compiled!.serializers.get(r.status);
      payload = serialize === undefined ? JSON.stringify(r.body) : serialize(r.body);
    } catch (e) {
      return this.fail(x, e);
    }
    this.end(x, r.status, r.headers, JSON_CONTENT_TYPE, payload, true);
  }

  /** The error handler of server.ts, for this route: one problem+json body, 5xx logged with details hidden. */
  private fail(x: Exchange, err: unknown): void {
    const problem = toProblem(err);
    if (problem.status >= 500) this.options.logger.error({ reqId: x.reqId, err }, 'request failed');
    this.end(x, problem.status, problem.headers, PROBLEM_CONTENT_TYPE, JSON.stringify(problem.body), false);
  }

  /**
   * Writes the answer with the headers fastify's route sends, in its order: request id, RateLimit-*,
   * the answer's own, content type and length. Values are made strings here once: node would convert
   * a number twice (to validate it, then to write it). `answer`: a refused header becomes a 500 problem.
   */
  private end(x: Exchange, status: number, own: Record<string, string | number>, type: string, payload: string, answer: boolean): void {
    const rate = x.rate;
    // Name, value, name, value: node reads a flat array with a plain loop (an object costs a for-in
    // and an own-property check per header). The answer's own headers never repeat these names.
    const headers: string[] =
      rate === undefined
        ? ['x-request-id', x.reqId]
        : [
            'x-request-id',
            x.reqId,
            'ratelimit-limit',
            `${rate.limit}`,
            'ratelimit-remaining',
            `${rate.remaining}`,
            'ratelimit-reset',
            `${rate.resetSeconds}`,
          ];
    for (const name in own) headers.push(name, `${own[name]}`);
    headers.push('content-type', type, 'content-length', `${Buffer.byteLength(payload)}`);
    // One write: headers and body leave together (no body for HEAD).
    const refused = x.sink.write(status, headers, payload);
    if (refused !== undefined) {
      // A header value node refuses (say, a control character): answer 500 without the answer's own
      // headers, as fastify's error handler does; never let it escape into the server's listener.
      if (answer && x.sink.canRetry()) return this.fail(x, refused);
      x.sink.abort(refused);
      status = 500;
    }
    this.options.record(x.reqId, this.spec.operation.id, x.method, x.url, status, performance.now() - x.start);
  }
}

/**
 * fastify's serverFactory: the node:http server fastify would make (same timeouts), whose listener
 * offers each request to the fast route first and hands the rest to fastify's handler unchanged.
 */
export function fastServerFactory(fast: FastRoute): FastifyServerFactory {
  return (handler, opts) => {
    const o = opts as {
      http?: object;
      keepAliveTimeout: number;
      requestTimeout: number;
      connectionTimeout: number;
      maxRequestsPerSocket?: number;
    };
    const server: Server = createServer(o.http ?? {}, (req, res) => {
      if (!fast.serve(req, res)) handler(req, res);
    });
    server.keepAliveTimeout = o.keepAliveTimeout;
    server.requestTimeout = o.requestTimeout;
    server.setTimeout(o.connectionTimeout);
    if (o.maxRequestsPerSocket !== undefined && o.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = o.maxRequestsPerSocket;
    // Connections start on the raw reader, which serves the route's plain GETs itself and hands
    // anything else to node (http/raw-http1.ts). Not with a per-connection request cap or a connection
    // timeout, which only node's server keeps.
    else if (!(o.connectionTimeout > 0))
      RawHttp1.install(server, {
        prefix: fast.prefix,
        serve: (head, reply) => fast.serveRaw(head, reply),
        maxHeaderBytes: (o.http as { maxHeaderSize?: number } | undefined)?.maxHeaderSize ?? maxHeaderSize,
        keepAliveTimeoutMs: () => server.keepAliveTimeout,
      });
    return server;
  };
}
