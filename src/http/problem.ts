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

/** Ajv error → (field, message). Fields are named as the client sent them: `ips`, `limit`, `ip_address`. */
interface ValidationIssue {
  instancePath: string;
  message?: string;
  params?: { missingProperty?: string; additionalProperty?: string };
}

export function fieldErrorsFromAjv(issues: ValidationIssue[], part: string | undefined): FieldErrors {
  const out: FieldErrors = {};
  for (const i of issues) {
    const path = i.instancePath.split('/').filter(Boolean);
    const field = i.params?.missingProperty ?? path[0] ?? (part === 'body' ? 'body' : (part ?? 'request'));
    (out[field] ??= []).push(i.message ?? 'is invalid');
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
