import { it } from 'node:test';
import assert from 'node:assert/strict';
import { buildTestApp } from '../../helpers/build-test-app.ts';
import { grpcClient } from '../../helpers/grpc-client.ts';

it('smoke', async (t) => {
  const app = await buildTestApp(t);
  const port = await app.grpc.listen('127.0.0.1', 0);
  const { key } = await app.team();
  const c = grpcClient(port);
  t.after(() => c.close());
  const r = await c.unary('LookupIP', { ip_address: '8.8.8.8' }, key);
  console.log(JSON.stringify(r));
  const h = await app.http.inject({ url: '/api/v4/lookup/ip/8.8.8.8', headers: { 'x-api-key': key } });
  console.log(h.body, h.headers);
  const a = await c.unary('GetAccountInfo', {}, key);
  console.log(JSON.stringify(a));
  const e = await c.unary('LookupIP', { ip_address: 'x' }, key);
  console.log(e.error?.code, e.error?.details, e.trailers);
  const n = await c.unary('LookupIP', { ip_address: 'x' });
  console.log(n.error?.code, n.error?.details, n.trailers);
  assert.ok(r.value);
});
