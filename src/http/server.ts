import { maxHeaderSize } from 'node:http';
import Fastify, { LogController, type FastifyInstance, type FastifyReply } from 'fastify';
import swagger from '@fastify/swagger';
import { Ajv } from 'ajv';
import type { Logger } from 'pino';
import { API_PREFIX } from '../operations.ts';
import type { Services } from '../services.ts';
import { registerOperationGuard } from './hooks/operation-guard.ts';
import type { OperationGuard } from '../operation-guard.ts';
import type { Metrics } from '../metrics.ts';
import { PROBLEM_CONTENT_TYPE, toProblem, type Problem as ProblemAnswer } from './problem.ts';
import type { RouteSpec } from './route-spec.ts';
import { accountMe } from './routes/account-me.ts';
import { health } from './routes/health.ts';
import { lookupDomain } from './routes/lookup-domain.ts';
import { lookupIp } from './routes/lookup-ip.ts';
import { lookupIps } from './routes/lookup-ips.ts';
import { feedStream } from './routes/feed-stream.ts';
import { feedExports } from './routes/feed-exports.ts';
import { reference } from './routes/reference.ts';
import type { DownloadSigner } from '../modules/exports/download-signer.ts';
import type { ObjectStore } from '../modules/exports/object-store.ts';
import type { NdjsonOptions } from './ndjson.ts';
import { FEED_LIST } from '../modules/feeds/feed-catalog.ts';
import { IpResult, Problem } from './schemas.ts';
import { finishApiDocument } from './openapi.ts';
import { API_EXAMPLES } from './openapi-examples.ts';
import { AppError, isAppError } from '../errors.ts';
import type { AddressAllowList } from '../lib/address-allow-list.ts';
import { lazyChildLogger } from '../lib/logger.ts';
import { requestIdFrom } from '../lib/request-id.ts';
import { FastRoute, fastServerFactory } from './fast-route.ts';
import { responseRecorder } from './response-log.ts';
import { internalRoutes, registerInternalRoutes } from './internal-routes.ts';
import type { EdgeConfig } from '../config.ts';
import { edgeAnswers } from './edge-answers.ts';
import { checkingIntervalMs, noRequest, protectConnections } from './connection-edge.ts';

export interface HttpServerDeps {
  services: Services;
  metrics: Metrics;
  logger: Logger;
  bodyLimitBytes: number;
  stream: NdjsonOptions;
  /** Aborted when the app closes: open streams end cleanly. */
  closing: AbortSignal;
  /** Operator ingestion token; undefined disables the ingest endpoint. */
  operatorToken: string | undefined;
  /** Who may reach /metrics and the operator routes (UMBRA_ADMIN_ALLOW). */
  adminAllow: AddressAllowList;
  /** The store that the download route reads. */
  objects: ObjectStore;
  /** Signs and checks the URLs of the download route (ExportService issues them). */
  downloads: DownloadSigner;
  /** Serve GET /lookup/ip/{ip} on the fast path in front of fastify (http/fast-route.ts); default true. */
  fastPath?: boolean;
  /** The operation guard shared with the gRPC server: one set of rate buckets per team. */
  guard: OperationGuard;
  /** Connection limit and timeouts of the listening socket (http/connection-edge.ts). */
  edge: EdgeConfig;
  /** UMBRA_PUBLIC_URL: the base of absolute download URLs; undefined: derived from each request. */
  publicUrl: string | undefined;
  /** The gRPC port, named in the reference page's examples; default 50051. */
  grpcPort?: number;
}

const ALL_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'] as const;

// Bodies are never coerced (a string is not an array of addresses); path and query strings are.
// verbose: errors carry the failing schema, from which problem.ts words what is accepted.
const ajvOptions = { useDefaults: true, allErrors: true, strict: false, verbose: true } as const;
const bodyAjv = new Ajv({ ...ajvOptions, coerceTypes: false, removeAdditional: false });
const stringAjv = new Ajv({ ...ajvOptions, coerceTypes: true, removeAdditional: true });

/** Builds the HTTP server with every route registered here, in one visible place. Tests call inject() on it. */
export async function createHttpServer(deps: HttpServerDeps): Promise<FastifyInstance> {
  const { services, metrics } = deps;
  const record = responseRecorder(metrics, deps.logger);
  // The single lookup is served in front of fastify's request pipeline (http/fast-route.ts); inject()
  // bypasses the server factory, so tests through inject() exercise fastify's route for it.
  const lookupIpRoute = lookupIp(services, metrics);
  let closeBegan = false;
  const closing = () => closeBegan || deps.closing.aborted;
  const fast = new FastRoute(lookupIpRoute, {
    prefix: API_PREFIX,
    admit: deps.guard.admitFor(lookupIpRoute.operation),
    record,
    logger: deps.logger,
    closing,
  });
  const { edge } = deps;
  // Whatever node's parser refuses (malformed, too large, too slow) and CONNECT get a problem+json answer too.
  const answers = edgeAnswers(
    () => ({
      maxHeaderBytes: (app.server as { maxHeaderSize?: number }).maxHeaderSize ?? maxHeaderSize,
      headersTimeoutMs: edge.headersTimeoutMs,
      requestTimeoutMs: edge.requestTimeoutMs,
    }),
    (status) => metrics.observe('edge', status, 0),
    deps.logger,
  );
  const app = Fastify({
    ...(deps.fastPath === false ? {} : { serverFactory: fastServerFactory(fast) }),
    // Node checks these timeouts every connectionsCheckingInterval; see http/connection-edge.ts.
    http: {
      headersTimeout: edge.headersTimeoutMs,
      requestTimeout: edge.requestTimeoutMs,
      connectionsCheckingInterval: checkingIntervalMs(edge.headersTimeoutMs),
    },
    requestTimeout: edge.requestTimeoutMs,
    keepAliveTimeout: edge.keepAliveTimeoutMs,
    clientErrorHandler: answers.clientError,
    loggerInstance: deps.logger,
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: deps.bodyLimitBytes,
    routerOptions: { maxParamLength: 1100 },
    requestIdHeader: false,
    childLoggerFactory: (logger, bindings, options) => lazyChildLogger(logger as Logger, bindings, options),
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']),
    // Server to server only: no CORS, and no trust in proxy headers unless configured later.
    trustProxy: false,
    // The router's own refusals (bad percent-encoding, overlong segment) are problems like any other.
    frameworkErrors: (err, req, reply) => {
      const problem = toProblem(err);
      void problemReply(reply.header('x-request-id', req.id), problem).send(problem.body);
    },
  });
  const connections = protectConnections(app.server, edge, answers, metrics, deps.logger);
  // At close, connections without a request go at once; those with one finish it (Connection: close).
  app.addHook('preClose', (done) => {
    connections.closeWhere(noRequest);
    done();
  });
  for (const ajv of [bodyAjv, stringAjv]) if (!ajv.getSchema('IpResult')) ajv.addSchema([IpResult, Problem]);
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? bodyAjv : stringAjv).compile(schema));
  // JSON only: the contract asks for Content-Type: application/json, so text/plain bodies get a 415.
  app.removeContentTypeParser('text/plain');
  app.addSchema(IpResult);
  app.addSchema(Problem);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'umbra API',
        version: '4',
        description: [
          'Anonymized-traffic intelligence: IP and domain lookups, feeds and exports. Every operation except the health probe needs an ' +
            'API key in the x-api-key header.',
          '',
          'Errors are application/problem+json. Rate-limited responses carry RateLimit-Limit, RateLimit-Remaining and RateLimit-Reset; a ' +
            '429 adds Retry-After. Billed responses carry X-Credits-Remaining.',
          '',
          'IP data: IP Geolocation by DB-IP (https://db-ip.com), CC BY 4.0; ASN data from RouteViews, NRO and DB-IP Lite, CC BY 4.0, via ' +
            'the ip-location-db project.',
        ].join('\n'),
      },
      servers: [{ url: '/' }],
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' } } },
    },
    transformObject: (document) => finishApiDocument((document as { openapiObject: Record<string, unknown> }).openapiObject, API_EXAMPLES),
    refResolver: { buildLocalReference: (json, _base, _fragment, i) => (json.$id as string | undefined) ?? `def-${i}` },
  });

  // Hooks are callback style: an async hook costs a promise and a microtask turn per request.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  // While closing, answers to requests still in flight say `Connection: close` and their connection
  // then closes: a kept-alive client connection must not hold the process up until the grace period ends.
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (closing()) reply.header('connection', 'close');
    done(null, payload);
  });
  registerOperationGuard(app as unknown as FastifyInstance, deps.guard);
  // Metric children are bound once per label pair; req.operation (set by the guard) spares the
  // req.routeOptions getter, which builds a new object on every access.
  app.addHook('onResponse', (req, reply, done) => {
    record(req.id, req.operation?.id ?? (req.is404 ? 'unmatched' : 'other'), req.method, req.url, reply.statusCode, reply.elapsedTime);
    done();
  });

  app.setErrorHandler(async (err, req, reply) => {
    const problem = toProblem(err);
    // A bug is an error with its stack. An engine or disk fault (503, 507) is expected operation, said
    // once by the store that met it: each request it refuses is a warning, its detail without a stack.
    if (problem.status >= 500) {
      if (isAppError(err) && err.code !== 'INTERNAL') req.log.warn({ code: err.code, detail: err.message }, 'request refused');
      else req.log.error({ err }, 'request failed');
    }
    problemReply(reply, problem);
    return problem.body;
  });
  app.setNotFoundHandler(async (req) => {
    throw new AppError(
      'ROUTE_NOT_FOUND',
      `No route ${req.method} ${req.url.split('?')[0]}. The API lives under ${API_PREFIX}; see ${API_PREFIX}/openapi.json.`,
    );
  });

  const routes: RouteSpec[] = [
    health(services),
    accountMe(services),
    lookupIpRoute,
    lookupIps(services, metrics),
    lookupDomain(services, metrics),
    ...FEED_LIST.map((feed) => feedStream(services, metrics, feed, deps.stream, deps.closing)),
    ...FEED_LIST.flatMap((feed) => feedExports(services, feed, deps.publicUrl)),
  ];
  for (const spec of routes) {
    const op = spec.operation;
    const security = op.scope ? [{ apiKey: [] }] : [];
    app.route({
      method: op.method,
      url: `${API_PREFIX}${op.path}`,
      config: { operation: op },
      schema: {
        ...spec.schema,
        operationId: op.id,
        summary: op.summary,
        description: op.description,
        security,
        tags: [op.id.split('.')[0]!],
      } as never,
      handler: spec.handler,
    });
    // A known path with another method is a 405 that names the allowed one, not a 404.
    const others = ALL_METHODS.filter((m) => m !== op.method && !(m === 'HEAD' && op.method === 'GET'));
    app.route({
      method: [...others],
      url: `${API_PREFIX}${op.path}`,
      schema: { hide: true } as never,
      handler: async (_req, reply) => {
        reply.header('allow', op.method === 'GET' ? 'GET, HEAD' : op.method);
        throw new AppError('METHOD_NOT_ALLOWED', `${op.path} accepts ${op.method} only.`);
      },
    });
  }
  await registerInternalRoutes(
    app as unknown as FastifyInstance,
    internalRoutes({
      services,
      metrics,
      objects: deps.objects,
      downloads: deps.downloads,
      openapi: () => app.swagger(),
      reference: reference(() => app.swagger(), `127.0.0.1:${deps.grpcPort ?? 50051}`),
      health: routes[0]!.handler,
    }),
    deps.operatorToken,
    deps.adminAllow,
  );

  app.addHook('onReady', function compileFastPath(done) {
    fast.compile(this as unknown as FastifyInstance);
    for (const spec of routes) spec.ready?.(this as unknown as FastifyInstance);
    done();
  });
  // fastify answers 503 to requests that arrive on kept-alive connections while it closes: from the
  // first close step on, the fast path hands every request to fastify so that stays so. Connections
  // that fall idle meanwhile (a stream ended by the close, a client that sent nothing more) are closed
  // as they do, instead of lingering for the keep-alive timeout.
  let reaper: NodeJS.Timeout | undefined;
  app.addHook('preClose', (done) => {
    closeBegan = true;
    reaper = setInterval(() => app.server.closeIdleConnections(), 100);
    reaper.unref();
    done();
  });
  app.addHook('onClose', (_instance, done) => {
    clearInterval(reaper);
    done();
  });

  return app as unknown as FastifyInstance;
}

/** Status, headers and media type of a problem answer; the caller sends (or returns) `problem.body`. */
function problemReply(reply: FastifyReply, problem: ProblemAnswer): FastifyReply {
  // A reply serializer keeps fastify from appending '; charset=utf-8' to the problem media type.
  return reply.code(problem.status).headers(problem.headers).header('content-type', PROBLEM_CONTENT_TYPE).serializer(JSON.stringify);
}
