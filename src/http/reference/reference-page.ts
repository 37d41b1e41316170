import { anchor, esc, inline, markdown } from './html.ts';
import {
  type FeedRef,
  type OpenApiDocument,
  type OpenApiMedia,
  type OpenApiOperation,
  type OperationView,
  type Variant,
  isFeedView,
  operationViews,
  variantsOf,
} from './openapi-view.ts';
import { PAGE_STYLE } from './page-style.ts';
import { schemaAnchor, schemaHtml } from './schema-html.ts';

export interface FeedInfo extends FeedRef {
  streamScope: string;
  exportScope: string;
  /** Unit of the record's `timestamp`. */
  unit: 's' | 'ms';
  /** The gRPC method that streams the feed. */
  grpcStream: string;
}

export interface GrpcMethodInfo {
  name: string;
  request: string;
  response: string;
  serverStreaming: boolean;
}

export interface StatusInfo {
  code: string;
  http: number;
  grpc: string;
  grpcNumber: number;
  title: string;
}

export interface ProtoFileInfo {
  /** Path under the proto include root (what an `import` names). */
  path: string;
  url: string;
}

/** What the page shows besides the OpenAPI document: read from the code's tables, so it cannot drift from them. */
export interface ReferenceContext {
  openapiUrl: string;
  /** The path every feed's operations live under (`/api/v4/feeds`). */
  feedsBase: string;
  feeds: FeedInfo[];
  /** operationId → the gRPC method that mirrors it. */
  grpcMethodOf: (operationId: string) => string | undefined;
  grpc: {
    service: string;
    mainProto: string;
    localAddress: string;
    methods: GrpcMethodInfo[];
    protoFiles: ProtoFileInfo[];
    statuses: StatusInfo[];
  };
}

const opAnchor = (view: OperationView): string => anchor('op', view.method, view.path.replace('{feed}', 'feed'));

const feedList = (feeds: FeedRef[]): string => feeds.map((f) => `<code>${esc(f.id)}</code>`).join(', ');

/** One part in its variants: shown once when shared, else once per group of feeds that read alike. */
function varied<T>(view: OperationView, pick: (op: OpenApiOperation) => T, show: (value: T) => string): string {
  const variants: Variant<T>[] = variantsOf(view, pick);
  if (variants.length === 1) return show(variants[0]!.value);
  return variants
    .map((v) => {
      const body = show(v.feeds.length === 1 ? v.first : v.value);
      return body ? `<div class="variant-block"><div class="variant-feeds">${feedList(v.feeds)}</div>${body}</div>` : '';
    })
    .join('');
}

function mediaHtml(type: string, media: OpenApiMedia): string {
  const examples: string[] = [];
  if (media.example !== undefined) examples.push(`<pre><code>${esc(JSON.stringify(media.example, null, 2))}</code></pre>`);
  for (const [name, ex] of Object.entries(media.examples ?? {})) {
    if (ex.value === undefined) continue;
    const label = esc(ex.summary ?? name);
    examples.push(`<div class="ex-name">${label}</div><pre><code>${esc(JSON.stringify(ex.value, null, 2))}</code></pre>`);
  }
  const schema = media.schema ? schemaHtml(media.schema) : '';
  const ex = examples.length ? `<details class="examples"><summary>Example</summary>${examples.join('')}</details>` : '';
  return `<div class="media"><span class="mt">${esc(type)}</span>${schema}${ex}</div>`;
}

function parametersHtml(params: OpenApiOperation['parameters']): string {
  if (!params?.length) return '';
  const rows = params.map((p) => {
    const req = p.required ? '<span class="req">required</span>' : '';
    const schema = p.schema ? schemaHtml(p.schema) : '';
    return `<tr><td><code class="name">${esc(p.name)}</code> ${req}</td><td>${esc(p.in)}</td><td>${schema}${markdown(p.description)}</td></tr>`;
  });
  return `<h4>Parameters</h4><table class="params"><thead><tr><th>Name</th><th>In</th><th>Type and meaning</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function bodyHtml(body: OpenApiOperation['requestBody']): string {
  if (!body) return '';
  const media = Object.entries(body.content ?? {}).map(([t, m]) => mediaHtml(t, m));
  return `<h4>Request body${body.required ? ' <span class="req">required</span>' : ''}</h4>${markdown(body.description)}${media.join('')}`;
}

const statusClass = (status: string): string => (status.startsWith('2') ? 'ok' : status.startsWith('3') ? 'redirect' : 'err');

/**
 * Responses: successes in full; errors that share a description and schema (the problem+json ones,
 * typically) collapse into one line listing their statuses, so the page shows each shape once.
 */
function responsesHtml(view: OperationView): string {
  const statuses = [...new Set(view.members.flatMap((m) => Object.keys(m.op.responses ?? {})))].sort();
  const full: string[] = [];
  const errorGroups = new Map<string, string[]>();
  for (const status of statuses) {
    const html = varied(
      view,
      (op) => op.responses?.[status],
      (r) => {
        if (!r) return '<p class="absent">not answered</p>';
        const headers = Object.entries(r.headers ?? {}).map(
          ([name, h]) =>
            `<li><code>${esc(name)}</code> ${h.schema ? `<span class="type">${esc(h.schema.type ?? '')}</span>` : ''} ${inline(h.description ?? '')}</li>`,
        );
        const media = Object.entries(r.content ?? {}).map(([t, m]) => mediaHtml(t, m));
        return `${markdown(r.description)}${headers.length ? `<ul class="headers">${headers.join('')}</ul>` : ''}${media.join('')}`;
      },
    );
    if (status >= '400') {
      const group = errorGroups.get(html) ?? [];
      group.push(status);
      errorGroups.set(html, group);
    } else {
      full.push(`<div class="response"><span class="status ${statusClass(status)}">${esc(status)}</span><div>${html}</div></div>`);
    }
  }
  for (const [html, group] of errorGroups) {
    const badges = group.map((s) => `<span class="status err">${esc(s)}</span>`).join('');
    full.push(`<details class="errors"><summary>${badges} <span class="err-note">one shape: expand</span></summary>${html}</details>`);
  }
  return full.length ? `<h4>Responses</h4>${full.join('')}` : '';
}

function securityLabel(op: OpenApiOperation, doc: OpenApiDocument): string {
  const schemes = (op.security ?? []).flatMap((req) => Object.keys(req));
  if (!schemes.length) return '<span class="pill open">no key</span>';
  return schemes
    .map((name) => {
      const s = doc.components?.securitySchemes?.[name];
      const where = s?.type === 'apiKey' && s.name ? `${s.name} ${s.in ?? ''}` : (s?.scheme ?? name);
      return `<span class="pill key">${esc(where.trim())}</span>`;
    })
    .join(' ');
}

function operationHtml(view: OperationView, doc: OpenApiDocument, ctx: ReferenceContext): string {
  const first = view.members[0]!.op;
  const grpc = [...new Set(view.members.map((m) => ctx.grpcMethodOf(m.op.operationId ?? '')).filter((g) => g !== undefined))];
  const grpcPill = grpc.length ? `<span class="pill grpc">gRPC ${grpc.map((g) => esc(g)).join(', ')}</span>` : '';
  const deprecated = first.deprecated ? '<span class="pill deprecated">deprecated</span>' : '';
  const summary = varied(
    view,
    (op) => op.summary,
    (s) => (s ? `<p class="summary">${inline(s)}</p>` : ''),
  );
  const description = varied(
    view,
    (op) => op.description,
    (d) => markdown(d),
  );
  return `<section class="op" id="${opAnchor(view)}">
<h3><span class="method ${esc(view.method)}">${esc(view.method.toUpperCase())}</span> <code class="path">${esc(view.path)}</code></h3>
<div class="meta">${securityLabel(first, doc)} ${grpcPill} ${deprecated}</div>
${summary}${description}
${varied(view, (op) => op.parameters, parametersHtml)}
${varied(view, (op) => op.requestBody, bodyHtml)}
${responsesHtml(view)}
</section>`;
}

const navOp = (view: OperationView): string =>
  `<li><a href="#${opAnchor(view)}"><span class="m ${esc(view.method)}">${esc(view.method.toUpperCase())}</span> ${esc(view.path.replace(/^\/api\/v\d+/, ''))}</a></li>`;

function feedsIntro(ctx: ReferenceContext): string {
  const base = esc(ctx.feedsBase);
  const rows = ctx.feeds.map(
    (f) => `<tr><td><code>${esc(f.id)}</code></td><td><code>${base}/${esc(f.segment)}</code></td><td><code>${esc(f.streamScope)}</code></td>
<td><code>${esc(f.exportScope)}</code></td><td>Unix ${f.unit === 'ms' ? 'milliseconds' : 'seconds'}</td><td><code>${esc(f.grpcStream)}</code></td></tr>`,
  );
  return `<p>Every feed has the same operations under <code>${base}/{feed}</code>; they are listed once below, with <code>{feed}</code>
standing for the feed's path segment. What they share:</p>
<ul>
<li><strong>Live stream</strong> (<code>…/stream</code>): <code>application/x-ndjson</code>, one JSON record per line as it arrives; an empty
line is a keepalive. The server closes the stream cleanly after its lifetime: reconnect at once.</li>
<li><strong>Snapshots</strong> (<code>…/export</code>): Parquet files. Each hour is written as an hourly snapshot; each day is rolled up
into a daily one. <code>{date}</code> is a UTC day <code>YYYY-MM-DD</code>, or <code>latest</code> for the newest snapshot;
<code>{date}/{hour}</code> names an hourly one. The list is newest first and paged with <code>cursor</code>.</li>
<li><strong>Downloads</strong> answer <strong>307</strong>: follow <code>Location</code>, a URL valid 24 hours that needs no API key.
<code>…/meta</code> gives the snapshot's checksum, size, rows and schema without downloading it.</li>
<li>The stream needs the feed's stream scope, the exports its export scope; feeds cost no credits.</li>
</ul>
<table class="feeds"><thead><tr><th>Feed</th><th>Path</th><th>Stream scope</th><th>Export scope</th><th><code>timestamp</code></th><th>gRPC stream</th></tr></thead>
<tbody>${rows.join('')}</tbody></table>`;
}

function grpcHtml(ctx: ReferenceContext): string {
  const g = ctx.grpc;
  const methods = g.methods.map(
    (m) =>
      `<tr><td><code>${esc(m.name)}</code></td><td><code>${esc(m.request)}</code></td><td><code>${m.serverStreaming ? 'stream ' : ''}${esc(m.response)}</code></td></tr>`,
  );
  const files = g.protoFiles.map((f) => `<li><a href="${esc(f.url)}"><code>${esc(f.path)}</code></a></li>`);
  const main = g.protoFiles.find((f) => f.path === g.mainProto);
  const statuses = g.statuses.map(
    (s) =>
      `<tr><td><code>${esc(s.code)}</code></td><td>${s.http}</td><td><code>${esc(s.grpc)}</code> (${s.grpcNumber})</td><td>${esc(s.title)}</td></tr>`,
  );
  const addr = esc(g.localAddress);
  return `<section id="grpc"><h2>gRPC</h2>
<p><code>${esc(g.service)}</code> mirrors the keyed operations above, with the same keys, scopes, rate limits and credits. Send the key as
the <code>x-api-key</code> metadata entry of every call. Field names are the JSON member names.</p>
<h3 id="grpc-proto">Proto files</h3>
<p>The schema is served as text at stable URLs (the service imports the well-known types beside it):</p>
<ul class="files">${files.join('')}</ul>
${main ? `<pre><code>curl -O ${esc(main.url.startsWith('/') ? `http://HOST${main.url}` : main.url)}</code></pre>` : ''}
<h3 id="grpc-reflection">Server reflection</h3>
<p>The server answers <code>grpc.reflection.v1</code> and <code>grpc.reflection.v1alpha</code> without a key, so a client can discover
the service without the .proto files. Locally the port is plaintext on <code>${addr}</code>; with TLS configured, drop
<code>-plaintext</code>.</p>
<pre><code>grpcurl -plaintext ${addr} list
grpcurl -plaintext ${addr} describe ${esc(g.service)}
grpcurl -plaintext -H "x-api-key: $KEY" -d '{}' ${addr} ${esc(g.service)}/${esc(g.methods[0]?.name ?? 'Method')}</code></pre>
<h3 id="grpc-methods">Methods</h3>
<table><thead><tr><th>Method</th><th>Request</th><th>Response</th></tr></thead><tbody>${methods.join('')}</tbody></table>
<h3 id="grpc-status">HTTP and gRPC status codes</h3>
<p>Both transports report failures from one table: the HTTP problem's <code>detail</code> is the gRPC status details text, and
<code>Retry-After</code>, rate-limit and credit headers travel as trailing metadata of the same names in lower case.</p>
<table class="status-table"><thead><tr><th>Error</th><th>HTTP</th><th>gRPC</th><th>Title</th></tr></thead><tbody>${statuses.join('')}</tbody></table>
</section>`;
}

/** The API reference page: the OpenAPI document rendered on the server, with the feed operations folded and a gRPC section. */
export function renderReferencePage(doc: OpenApiDocument, ctx: ReferenceContext): string {
  const views = operationViews(doc, ctx.feeds, ctx.feedsBase);
  const plain = views.filter((v) => !isFeedView(v));
  const feedViews = views.filter(isFeedView);
  const tagOrder = [...(doc.tags ?? []).map((t) => t.name), ...plain.map((v) => v.members[0]!.op.tags?.[0] ?? 'other')];
  const tags = [...new Set(tagOrder)].filter((t) => plain.some((v) => (v.members[0]!.op.tags?.[0] ?? 'other') === t));
  const tagDescription = (name: string) => doc.tags?.find((t) => t.name === name)?.description;
  const byTag = (tag: string) => plain.filter((v) => (v.members[0]!.op.tags?.[0] ?? 'other') === tag);
  const schemas = Object.entries(doc.components?.schemas ?? {});
  const title = doc.info?.title?.trim() || 'umbra API';
  const version = doc.info?.version ? `v${doc.info.version}` : '';

  const nav = `<nav class="side"><div class="brand">umbra<span>API reference ${esc(version)}</span></div>
<ul><li><a href="#overview">Overview</a></li></ul>
${tags.map((t) => `<div class="nav-h"><a href="#${anchor('tag', t)}">${esc(t)}</a></div><ul>${byTag(t).map(navOp).join('')}</ul>`).join('\n')}
<div class="nav-h"><a href="#feeds">feeds</a> <span class="count">${ctx.feeds.length} feeds</span></div><ul>${feedViews.map(navOp).join('')}</ul>
<div class="nav-h"><a href="#schemas">Schemas</a></div><ul>${schemas.map(([n]) => `<li><a href="#${schemaAnchor(n)}">${esc(n)}</a></li>`).join('')}</ul>
<div class="nav-h"><a href="#grpc">gRPC</a></div><ul><li><a href="#grpc-proto">Proto files</a></li><li><a href="#grpc-reflection">Server reflection</a></li>
<li><a href="#grpc-methods">Methods</a></li><li><a href="#grpc-status">Status codes</a></li></ul>
</nav>`;

  const servers = (doc.servers ?? [])
    .map((s) => `<code>${esc(s.url)}</code>${s.description ? ` ${inline(s.description)}` : ''}`)
    .join(', ');
  const main = `<main>
<header id="overview"><h1>${esc(title)} <span class="version">${esc(version)}</span></h1>
<p class="links"><a href="${esc(ctx.openapiUrl)}">OpenAPI ${esc(doc.openapi ?? '')} document</a> · <a href="#grpc">gRPC</a>${servers ? ` · server ${servers}` : ''}</p></header>
<div class="intro">${markdown(doc.info?.description)}</div>
${tags
  .map(
    (t) => `<section class="tag" id="${anchor('tag', t)}"><h2>${esc(t)}</h2>${markdown(tagDescription(t))}
${byTag(t)
  .map((v) => operationHtml(v, doc, ctx))
  .join('\n')}</section>`,
  )
  .join('\n')}
<section class="tag" id="feeds"><h2>feeds</h2>${markdown(tagDescription('feeds'))}${feedsIntro(ctx)}
${feedViews.map((v) => operationHtml(v, doc, ctx)).join('\n')}</section>
<section id="schemas"><h2>Schemas</h2>
${schemas.map(([name, s]) => `<section class="op" id="${schemaAnchor(name)}"><h3>${esc(name)}</h3>${schemaHtml(s)}</section>`).join('\n')}</section>
${grpcHtml(ctx)}
</main>`;

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)} reference</title><style>${PAGE_STYLE}</style></head>
<body>${nav}${main}</body></html>`;
}
