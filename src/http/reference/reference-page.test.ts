import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OpenApiDocument } from './openapi-view.ts';
import { renderReferencePage, type ReferenceContext } from './reference-page.ts';

const feed = (id: string, segment: string) => ({
  id,
  segment,
  streamScope: 'S',
  exportScope: 'E',
  unit: 's' as const,
  grpcStream: 'Stream',
});
const ctx: ReferenceContext = {
  openapiUrl: '/api/v4/openapi.json',
  feedsBase: '/api/v4/feeds',
  feeds: [feed('proxies', 'proxies'), feed('honeypot_http', 'helio/http')],
  grpcMethodOf: () => undefined,
  grpc: { service: 'x.v1.S', mainProto: 'x.proto', localAddress: '127.0.0.1:50051', methods: [], protoFiles: [], statuses: [] },
};
const stream = (name: string, member: string) => ({
  get: {
    summary: `Live stream of the ${name} feed`,
    responses: {
      '200': {
        description: 'ok',
        content: { 'application/x-ndjson': { schema: { type: 'object', properties: { [member]: { type: 'string' } } } } },
      },
    },
  },
});
const doc: OpenApiDocument = {
  info: { title: 'umbra API', version: '4', description: 'Say <script>alert(1)</script> and `code`' },
  paths: {
    '/api/v4/health': { get: { summary: 'Health', tags: ['health'] } },
    '/api/v4/feeds/proxies/stream': stream('proxies', 'provider'),
    '/api/v4/feeds/helio/http/stream': stream('honeypot_http', 'method'),
  },
};

describe('renderReferencePage', () => {
  const html = renderReferencePage(doc, ctx);

  it('should fold the feeds into one operation with {feed}, saying once what they share and per feed what differs', () => {
    assert.equal(html.match(/<code class="path">[^<]*stream<\/code>/g)?.length, 1);
    assert.match(html, /<code class="path">\/api\/v4\/feeds\/\{feed\}\/stream<\/code>/);
    assert.equal(html.match(/Live stream of the \{feed\} feed/g)?.length, 1, 'the shared summary, once');
    assert.match(html, /<code>proxies<\/code><\/div>.*provider/s);
    assert.match(html, /<code>honeypot_http<\/code><\/div>.*method/s);
    assert.doesNotMatch(html, /\/feeds\/helio\/http\/stream/);
  });

  it('should escape the document text', () => {
    assert.doesNotMatch(html, /<script/);
    assert.match(html, /&lt;script&gt;/);
    assert.match(html, /<code>code<\/code>/);
  });
});
