import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Static, type TSchema, Type } from 'typebox';
import { OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { callerOf } from '../hooks/operation-guard.ts';
import type { Metrics } from '../../metrics.ts';
import { batchSerializer, frozenPartsWriter, packedResultsWriter, type Serialize } from '../frozen-parts-json.ts';
import { sendBilled, type RouteSpec } from '../route-spec.ts';
import { BatchResult, errorResponses, IpResult } from '../schemas.ts';

const Body = Type.Object({ ips: Type.Array(Type.String(), { maxItems: 1000, description: 'Up to 1,000 IPv4/IPv6 addresses' }) });

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

export const lookupIps = (s: Services, metrics: Metrics): RouteSpec => {
  /**
   * The 200 body's serializer: the same bytes as the route's schema serializer, with each result's
   * records written as they carry their JSON (batchSerializer), and the results of a PackedBatch
   * copied from their records' prepared bytes (packedResultsWriter). Made once fastify is ready; until
   * then the route's own serializer writes it, from results as objects.
   */
  let ok: ((data: unknown) => string | Buffer) | undefined;
  return {
    operation: OPERATIONS.lookupIps,
    schema: { body: Body, response: { 200: BatchResult, ...errorResponses([400, 401, 402, 403, 413, 415, 429, 503]) } },
    handler: async (req: FastifyRequest<{ Body: Static<typeof Body> }>, reply) => {
      // Until the serializer that writes packed results is made (fastify ready), results come as objects.
      if (ok === undefined) return sendBilled(reply, metrics, OPERATIONS.lookupIps, await s.lookup.lookupIps(callerOf(req), req.body.ips));
      const body = await sendBilled(reply, metrics, OPERATIONS.lookupIps, await s.lookup.lookupIpsPacked(callerOf(req), req.body.ips));
      // The content type is the one fastify sets for its own serializer (a reply serializer sets none).
      // fastify sends a serializer's Buffer as it is (typed as string only).
      reply.header('content-type', JSON_CONTENT_TYPE).serializer(ok as (payload: unknown) => string);
      return body;
    },
    ready(app: FastifyInstance) {
      const compiler = app.serializerCompiler;
      if (!compiler) throw new Error('batch lookups: fastify has no serializer compiler yet (call ready() on ready)');
      const url = `${OPERATIONS.lookupIps.path}`;
      const compile = (schema: TSchema) => compiler({ schema, method: 'POST', url, httpStatus: '200' }) as Serialize;
      const item = frozenPartsWriter(IpResult, compile, compile(Type.Ref('IpResult')));
      ok = batchSerializer(item, compile(BatchResult), packedResultsWriter(IpResult, item));
    },
  };
};
