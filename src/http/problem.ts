import { AppError, dependencyFault, publicDetail, retryAfterSeconds, STATUS, type ErrorCode, type FieldErrors } from '../errors.ts';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  /** Same text as detail: some clients read only `error`. */
  error: string;
  errors?: FieldErrors;
  /** Members an error adds (AppErrorContext.members), e.g. `accepted` of a partly stored ingest. */
  [member: string]: unknown;
}

export interface Problem {
  status: number;
  body: ProblemBody;
  headers: Record<string, string | number>;
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

const typeUri = (code: ErrorCode): string => `urn:umbra:problem:${code.toLowerCase().replace(/_/g, '-')}`;

/** An Ajv error (compiled with `verbose`, so the failing schema is at hand). */
interface ValidationIssue {
  instancePath: string;
  schemaPath?: string;
  keyword?: string;
  message?: string;
  params?: { missingProperty?: string; additionalProperty?: string; limit?: number; format?: string };
  parentSchema?: AcceptedSchema;
}

interface AcceptedSchema {
  type?: string | string[];
  minimum?: number;
  maximum?: number;
  enum?: unknown[];
  const?: unknown;
  anyOf?: AcceptedSchema[];
  items?: AcceptedSchema;
  description?: string;
}

const NOUNS: Record<string, [string, string]> = {
  integer: ['an integer', 'integers'],
  number: ['a number', 'numbers'],
  string: ['a string', 'strings'],
  boolean: ['true or false', 'booleans'],
  array: ['an array', 'arrays'],
  object: ['a JSON object', 'JSON objects'],
  null: ['null', 'nulls'],
};

/** What a schema accepts, in words: `an integer from 1 to 23`, `true or false`, `one of hourly, rollup`. */
function accepted(s: AcceptedSchema | undefined): string | undefined {
  if (!s) return undefined;
  const values =
    s.enum ?? (s.const !== undefined ? [s.const] : s.anyOf?.flatMap((a) => a.enum ?? (a.const !== undefined ? [a.const] : [])));
  if (values && values.length > 0) return values.length === 1 ? String(values[0]) : `one of ${values.map(String).join(', ')}`;
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === undefined || !NOUNS[type]) return undefined;
  if (type === 'integer' || type === 'number') {
    const noun = NOUNS[type][0];
    if (s.minimum !== undefined && s.maximum !== undefined) return `${noun} from ${s.minimum} to ${s.maximum}`;
    if (s.minimum !== undefined) return `${noun} of at least ${s.minimum}`;
    if (s.maximum !== undefined) return `${noun} of at most ${s.maximum}`;
  }
  const itemType = Array.isArray(s.items?.type) ? s.items.type[0] : s.items?.type;
  if (type === 'array' && itemType && NOUNS[itemType]) return `an array of ${NOUNS[itemType][1]}`;
  return NOUNS[type][0];
}

/**
 * One validation failure as a person would say it, naming what is accepted (`must be true or false`),
 * never the validator's own wording (`must be equal to constant`, `must match a schema in anyOf`).
 */
function humanMessage(i: ValidationIssue): string {
  const limit = i.params?.limit;
  const acceptedText = accepted(i.parentSchema);
  switch (i.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not an accepted member';
    case 'maxLength':
      return `must be at most ${limit} characters long`;
    case 'minLength':
      return limit === 1 ? 'must not be empty' : `must be at least ${limit} characters long`;
    case 'maxItems':
      return `must have at most ${limit} items`;
    case 'minItems':
      return `must have at least ${limit} item${limit === 1 ? '' : 's'}`;
    case 'format':
      return `must be a valid ${i.params?.format}`;
    case 'pattern':
      return i.parentSchema?.description ? `must be ${i.parentSchema.description}` : 'is not in the accepted form';
    default:
      return acceptedText ? `must be ${acceptedText}` : 'is not valid';
  }
}

/**
 * Ajv errors → field → messages. Fields are named as the client sent them (`ips`, `limit`, `ip_address`);
 * a failure inside one (an item of `ips`) names the item. One field's alternatives (anyOf) say one thing once.
 */
export function fieldErrorsFromAjv(issues: ValidationIssue[], part: string | undefined): FieldErrors {
  const out: FieldErrors = {};
  // A failed anyOf is said once, from its own schema: its branches' failures (`must be a`, `must be b`) are not repeated.
  const alternatives = issues.filter((i) => i.keyword === 'anyOf' || i.keyword === 'oneOf').map((i) => `${i.schemaPath}/`);
  for (const i of issues) {
    if (alternatives.some((a) => i.schemaPath?.startsWith(a))) continue;
    const path = i.instancePath.split('/').filter(Boolean);
    const missing = i.params?.missingProperty ?? i.params?.additionalProperty;
    const field = path[0] ?? missing ?? (part === 'body' ? 'body' : (part ?? 'request'));
    const inner = [...path.slice(1), ...(path.length > 0 && missing ? [missing] : [])]
      .map((p) => (/^\d+$/.test(p) ? `item ${p}` : p))
      .join(' ');
    const message = inner ? `${inner} ${humanMessage(i)}` : humanMessage(i);
    const messages = (out[field] ??= []);
    if (!messages.includes(message)) messages.push(message);
  }
  return out;
}

/** fastify's own client errors (FST_ERR_*) → our codes; anything unknown is a 500 and its text stays hidden. */
function fromFastify(err: { statusCode?: number; code?: string; message: string }): AppError {
  // Router-level refusals, before any route (and so any schema) is known.
  if (err.code === 'FST_ERR_BAD_URL') return AppError.field('path', 'is not a valid URL path: malformed percent-encoding');
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return new AppError('URI_TOO_LONG', 'A path segment of this URL is longer than any valid value.');
  switch (err.statusCode) {
    case 400:
      return AppError.field('body', err.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' ? 'must not be empty' : 'must be valid JSON');
    case 413:
      return new AppError('PAYLOAD_TOO_LARGE', 'The request body is larger than this server accepts.');
    case 415:
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'Send the body as Content-Type: application/json.');
    default:
      return new AppError('INTERNAL', 'internal');
  }
}

/** Builds the one problem+json body for any thrown value. 5xx details never leak internals. */
export function toProblem(err: unknown): Problem {
  let app: AppError;
  if (err instanceof AppError) app = err;
  else {
    const e = err as { validation?: ValidationIssue[]; validationContext?: string; statusCode?: number; code?: string; message: string };
    app = e.validation
      ? AppError.validation(fieldErrorsFromAjv(e.validation, e.validationContext))
      : (dependencyFault(err) ?? fromFastify(e));
  }
  const row = STATUS[app.code];
  const detail = publicDetail(app);
  const body: ProblemBody = { type: typeUri(app.code), title: row.title, status: row.http, detail, error: detail };
  if (app.context.members) for (const [k, v] of Object.entries(app.context.members)) if (!(k in body)) body[k] = v;
  if (app.context.fields) body.errors = app.context.fields;
  const headers: Record<string, string | number> = { ...app.context.headers };
  const retryAfter = retryAfterSeconds(app);
  if (retryAfter !== undefined) headers['retry-after'] = retryAfter;
  return { status: row.http, body, headers };
}
