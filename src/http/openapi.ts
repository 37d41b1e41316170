import { ALL_OPERATIONS, type Operation } from '../operations.ts';
import { PROBLEM_CONTENT_TYPE } from './problem.ts';

/**
 * One request umbra answered in a real run (scripts/capture-api-examples.ts), kept as the example of
 * an operation in the OpenAPI document. `test/integration/http/openapi.test.ts` checks each against
 * the schemas the document declares, so an example cannot drift from what the server sends.
 */
export interface ApiExchange {
  /** Names the example in the document (e.g. `ipv4`, `no-key`). */
  name: string;
  request: {
    method: 'GET' | 'POST';
    /** The path and query as sent, under /api/v4. */
    url: string;
    params?: Record<string, string>;
    query?: Record<string, string>;
    body?: unknown;
  };
  status: number;
  /** The response headers of HEADERS below, as received (lower-case names). */
  headers: Record<string, string>;
  /** The JSON body; for an NDJSON stream, its first record. Absent for a redirect. */
  body?: unknown;
}

/** Captured exchanges by operation id. */
export type ApiExamples = Readonly<Record<string, readonly ApiExchange[]>>;

type Json = Record<string, unknown>;

interface HeaderDoc {
  description: string;
  schema: Json;
}

/** The headers umbra sets on /api/v4 answers (http/server.ts, the operation guard, route-spec.ts, problem.ts). */
export const HEADERS = {
  'X-Request-Id': {
    description:
      "The id of this request in the server's logs: the client's own X-Request-Id when it sent a well-formed one (up to 128 of " +
      'letters, digits and _.:-), else one the server made.',
    schema: { type: 'string', maxLength: 128 },
  },
  'RateLimit-Limit': {
    description: "Capacity of the team's rate bucket this operation draws from. Sent once the key is known and has the scope.",
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Remaining': {
    description: 'Requests left in the bucket now.',
    schema: { type: 'integer', minimum: 0 },
  },
  'RateLimit-Reset': {
    description: 'Seconds until the bucket is full again.',
    schema: { type: 'integer', minimum: 0 },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 1 },
  },
  'X-Credits-Remaining': {
    description: "The team's lookup credits left after this request's charge.",
    schema: { type: 'integer', minimum: 0 },
  },
  'X-Data-Version': {
    description:
      'The version of the IP data this answer comes from: `dataset=<build time>; <source>=<version>...; lists=<count>:<digest>`. ' +
      'It changes when the dataset is swapped or a list is imported.',
    schema: { type: 'string' },
  },
} as const satisfies Record<string, HeaderDoc>;

export type HeaderName = keyof typeof HEADERS;

// Billed answers of the operations that read the IP data (LookupService.chargeOnView) say which version.
const DATA_VERSIONED = new Set(['lookup.ip', 'lookup.ips']);

/**
 * The headers an answer of `op` with `status` carries, and whether every such answer has it. This is
 * the one statement of where each header is sent; the OpenAPI test holds it against real answers.
 */
export function headersOf(op: Operation, status: number, problem: boolean): Partial<Record<HeaderName, boolean>> {
  const out: Partial<Record<HeaderName, boolean>> = { 'X-Request-Id': true };
  const answered = status < 400;
  // The guard consults the bucket after the key and its scope: a 401 or 403 has no RateLimit-*. An
  // error met before the guard (the connection limit's 503) has none either.
  if (op.bucket !== null && status !== 401 && status !== 403) {
    const always = answered || status === 429;
    out['RateLimit-Limit'] = always;
    out['RateLimit-Remaining'] = always;
    out['RateLimit-Reset'] = always;
  }
  if (problem && (status === 429 || status === 503)) out['Retry-After'] = true;
  if (status === 200 && op.cost.kind !== 'free') out['X-Credits-Remaining'] = true;
  if (status === 200 && DATA_VERSIONED.has(op.id)) out['X-Data-Version'] = true;
  return out;
}

const OPERATION_BY_ID = new Map(ALL_OPERATIONS.map((o) => [o.id, o]));

/**
 * Completes the document @fastify/swagger builds from the route schemas with what those schemas
 * cannot say: the licence, the headers of every answer, and the captured examples of each operation.
 * Route schemas stay the source of parameters, bodies, statuses and error media types.
 */
export function finishApiDocument(doc: Json, examples: ApiExamples): Json {
  doc.info = { ...(doc.info as Json), license: { name: 'Apache 2.0', identifier: 'Apache-2.0' } };
  for (const methods of Object.values((doc.paths ?? {}) as Record<string, Record<string, Json>>)) {
    for (const operation of Object.values(methods)) {
      const op = OPERATION_BY_ID.get(operation.operationId as string);
      if (!op) continue;
      const captured = examples[op.id] ?? [];
      documentResponses(op, operation.responses as Record<string, Json>, captured);
      exampleRequests(operation, captured);
    }
  }
  return doc;
}

function documentResponses(op: Operation, responses: Record<string, Json>, captured: readonly ApiExchange[]): void {
  for (const [code, response] of Object.entries(responses)) {
    const status = Number(code);
    const content = response.content as Record<string, Json> | undefined;
    const problem = content?.[PROBLEM_CONTENT_TYPE] !== undefined;
    const seen = captured.filter((x) => x.status === status);
    const headers: Record<string, Json> = {};
    for (const [name, required] of Object.entries(headersOf(op, status, problem)) as Array<[HeaderName, boolean]>) {
      const value = seen.find((x) => x.headers[name.toLowerCase()] !== undefined)?.headers[name.toLowerCase()];
      const { schema, description } = HEADERS[name];
      headers[name] = {
        description,
        ...(required ? { required: true } : {}),
        schema,
        ...(value === undefined ? {} : { example: typed(schema, value) }),
      };
    }
    // Headers a route declares itself (Location and Cache-Control of a redirect) follow, with their example.
    for (const [name, header] of Object.entries((response.headers ?? {}) as Record<string, Json>)) {
      const value = seen.find((x) => x.headers[name.toLowerCase()] !== undefined)?.headers[name.toLowerCase()];
      headers[name] = { ...header, required: true, ...(value === undefined ? {} : { example: value }) };
    }
    response.headers = headers;
    const media = content && Object.values(content)[0];
    const bodies = seen.filter((x) => x.body !== undefined);
    if (media && bodies.length > 0)
      media.examples = Object.fromEntries(bodies.map((x) => [x.name, { summary: `${x.request.method} ${x.request.url}`, value: x.body }]));
  }
}

function exampleRequests(operation: Json, exchanges: readonly ApiExchange[]): void {
  // Requests the server accepted: a refused one (explain=yes) is the example of its error response only.
  const captured = exchanges.filter((x) => x.status < 400);
  for (const p of (operation.parameters ?? []) as Json[]) {
    const from = p.in === 'path' ? 'params' : p.in === 'query' ? 'query' : undefined;
    const given = from && captured.find((x) => x.request[from]?.[p.name as string] !== undefined);
    if (given && from) p.example = typed(p.schema as Json, given.request[from]![p.name as string]!);
  }
  const media = (operation.requestBody as { content?: Record<string, Json> } | undefined)?.content?.['application/json'];
  const sent = captured.filter((x) => x.request.body !== undefined);
  if (media && sent.length > 0)
    media.examples = Object.fromEntries(
      sent.map((x) => [x.name, { summary: `${x.request.method} ${x.request.url}`, value: x.request.body }]),
    );
}

/** A header or query text as the value its schema describes (`5` for an integer, `true` for a boolean). */
function typed(schema: Json | undefined, text: string): unknown {
  if (schema?.type === 'integer' && /^-?\d+$/.test(text)) return Number(text);
  if (schema?.type === 'boolean' && (text === 'true' || text === 'false')) return text === 'true';
  return text;
}
