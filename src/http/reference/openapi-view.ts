import type { JsonSchema } from './schema-html.ts';

/** The parts of an OpenAPI 3.1 document the reference page reads; everything else is ignored, never required. */
export interface OpenApiParameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema?: JsonSchema;
  example?: unknown;
  deprecated?: boolean;
}

export interface OpenApiMedia {
  schema?: JsonSchema;
  example?: unknown;
  examples?: Record<string, { summary?: string; value?: unknown }>;
}

export interface OpenApiResponse {
  description?: string;
  headers?: Record<string, { description?: string; schema?: JsonSchema }>;
  content?: Record<string, OpenApiMedia>;
}

export interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  deprecated?: boolean;
  parameters?: OpenApiParameter[];
  requestBody?: { description?: string; required?: boolean; content?: Record<string, OpenApiMedia> };
  responses?: Record<string, OpenApiResponse>;
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  openapi?: string;
  info?: { title?: string; version?: string; description?: string };
  servers?: { url: string; description?: string }[];
  tags?: { name: string; description?: string }[];
  paths?: Record<string, Record<string, OpenApiOperation>>;
  components?: {
    schemas?: Record<string, JsonSchema>;
    securitySchemes?: Record<string, { type?: string; in?: string; name?: string; description?: string; scheme?: string }>;
  };
}

export interface FeedRef {
  id: string;
  /** URL segment S of /feeds/S/...; may hold a slash (helio/http). */
  segment: string;
}

/** One operation of the page: a plain one (members has one entry, feed undefined) or one shape shared by every feed. */
export interface OperationView {
  method: string;
  /** The path, with `{feed}` standing for the feed segment in a feed group. */
  path: string;
  members: { feed: FeedRef | undefined; op: OpenApiOperation }[];
}

/** A part of an operation (its summary, a response) as it reads for a group of feeds; one variant when all feeds share it. */
export interface Variant<T> {
  feeds: FeedRef[];
  /** The part with each feed's name as `{feed}`, as the feeds share it. */
  value: T;
  /** The part as the first of `feeds` has it, names included (what a variant of one feed shows). */
  first: T;
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
export const FEED_PLACEHOLDER = '{feed}';

/** Every operation of the document in its order, feed operations folded into one view per path shape. */
export function operationViews(doc: OpenApiDocument, feeds: readonly FeedRef[], feedsBase: string): OperationView[] {
  // Longest segment first, so a segment that prefixes another cannot claim its paths.
  const bySegment = [...feeds].sort((a, b) => b.segment.length - a.segment.length);
  const views = new Map<string, OperationView>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const feed = bySegment.find((f) => path === `${feedsBase}/${f.segment}` || path.startsWith(`${feedsBase}/${f.segment}/`));
      const shown = feed ? `${feedsBase}/${FEED_PLACEHOLDER}${path.slice(feedsBase.length + 1 + feed.segment.length)}` : path;
      const key = `${method} ${shown}`;
      let view = views.get(key);
      if (!view) views.set(key, (view = { method, path: shown, members: [] }));
      view.members.push({ feed, op });
    }
  }
  return [...views.values()];
}

export const isFeedView = (view: OperationView): boolean => view.members.some((m) => m.feed);

/** The value with the feed's id and segment written as `{feed}`, so parts that differ only by the feed's name compare equal. */
function generalize<T>(value: T, feed: FeedRef | undefined): T {
  if (!feed || value === undefined) return value;
  const names = [feed.segment, feed.id].sort((a, b) => b.length - a.length);
  let json = JSON.stringify(value);
  for (const name of names) json = json.split(name).join(FEED_PLACEHOLDER);
  return JSON.parse(json) as T;
}

/** The distinct forms of one part across a view's feeds, in feed order; a single entry means every feed shares it. */
export function variantsOf<T>(view: OperationView, pick: (op: OpenApiOperation) => T): Variant<T>[] {
  const found = new Map<string, Variant<T>>();
  for (const m of view.members) {
    const value = generalize(pick(m.op), m.feed);
    const key = JSON.stringify(value) ?? 'undefined';
    const known = found.get(key);
    if (known) {
      if (m.feed) known.feeds.push(m.feed);
    } else {
      found.set(key, { feeds: m.feed ? [m.feed] : [], value, first: pick(m.op) });
    }
  }
  return [...found.values()];
}
