// Fan-out bench server. umbra mode: the real app (auth, connection bucket, allowance, NDJSON writer,
// in-process bus). bare mode: node:http writing the same lines to every open response (the baseline).
// On stdin `publish <records/s> <seconds>` it publishes proxies records stamped with their publish time.
import { createServer, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildApp } from '../../src/app.ts';
import { parseConfig } from '../../src/config.ts';
import { SCOPES } from '../../src/modules/accounts/scopes.ts';
import type { FeedMessage } from '../../src/modules/feeds/feed-bus.ts';
import { tinyDataset } from '../../test/helpers/tiny-dataset.ts';

const bare = process.argv[2] === 'bare';
const now = () => performance.timeOrigin + performance.now();
let publish: (batch: FeedMessage[]) => Promise<void>;
let port: number;
let grpcPort: number | undefined;
let key = '';
let dataDir: string | undefined;

if (bare) {
  const clients = new Set<ServerResponse>();
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    res.flushHeaders();
    clients.add(res);
    res.on('close', () => clients.delete(res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
  publish = async (batch) => {
    let text = '';
    for (const m of batch) text += `${m.line}\n`;
    for (const c of clients) c.write(text);
  };
} else {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-stream-'));
  dataDir = dir;
  const config = parseConfig({ UMBRA_DATA_DIR: dir, UMBRA_LOG_LEVEL: 'warn', UMBRA_STREAM_BUFFER: '1000000' });
  const app = await buildApp(config, { dataset: tinyDataset });
  const org = await app.services.admin.createOrg({ name: 'bench', maxStreams: 1000 });
  await app.services.admin.setLimit(org.id, 'stream', { rate: 1e6, burst: 1e6 });
  key = (await app.services.admin.createKey({ org: org.id, email: 'bench@umbra.local', scopes: [...SCOPES] })).secret;
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  port = (app.http.server.address() as { port: number }).port;
  grpcPort = await app.grpc.listen('127.0.0.1', 0);
  publish = (batch) => app.stores.bus.publish('proxies', batch);
}

process.stdout.write(`${JSON.stringify({ port, grpcPort, key })}\n`);
createInterface({ input: process.stdin }).on('line', async (line) => {
  const [cmd, rate, seconds] = line.split(' ');
  if (cmd !== 'publish') return;
  // A batch about every 5 ms, as a busy ingestion path publishes; paced by the clock to hold the rate.
  const start = Date.now();
  const end = start + Number(seconds) * 1000;
  let n = 0;
  while (Date.now() < end) {
    const t = now();
    const batch: FeedMessage[] = [];
    const owed = Math.floor(((Date.now() - start) / 1000) * Number(rate)) - n;
    for (let i = 0; i < owed; i++) {
      const record = {
        ip: '109.176.45.49',
        provider: 'BRIGHTDATA',
        type: 'RESIDENTIAL_PROXY',
        timestamp: Math.floor(t / 1000),
        country_code: 'US',
        asn: 16276,
        seq: n++,
        t,
      };
      batch.push({ record, line: JSON.stringify(record) });
    }
    await publish(batch);
    await new Promise((r) => setTimeout(r, 5));
  }
  process.stdout.write(`${JSON.stringify({ published: n })}\n`);
});
// The data dir goes with the process: each fan-out run left one behind in /tmp.
process.on('SIGTERM', () => {
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  process.exit(0);
});
