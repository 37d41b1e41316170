import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AuthenticationError,
  ConnectionError,
  InsufficientCreditsError,
  IntegrityError,
  NotFoundError,
  PermissionDeniedError,
  RateLimitError,
  ServerError,
  UmbraClient,
  ValidationError,
} from '../src/index.ts';
import { recordingClock, startUmbra, type UmbraUnderTest } from './umbra-server.ts';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A TCP port that answers each request with `answer` (raw HTTP), or cuts it when `answer` is undefined. */
async function rawServer(answer: string | undefined): Promise<{ port: number; requests: () => number; server: Server }> {
  let n = 0;
  const server = createServer((s) => {
    s.once('data', () => {
      n++;
      if (answer === undefined) s.destroy();
      else s.end(answer);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { port: (server.address() as AddressInfo).port, requests: () => n, server };
}

describe('@umbra/client against a real umbra server', () => {
  let u: UmbraUnderTest;
  let client: UmbraClient;
  let keys: { basic: string; poor: string; tight: string; billing: string; streamy: string };
  const dir = mkdtempSync(join(tmpdir(), 'umbra-client-files-'));
  // The server, its data dir and the relay, undone last-made first when the suite ends.
  const cleanups: Array<() => unknown> = [];

  before(async () => {
    const t = { after: (fn: () => unknown) => void cleanups.push(fn) } as never;
    u = await startUmbra(t, (admin) => {
      const team = (name: string, credits: number, scopes: string) => {
        admin('org', 'create', '--name', name, '--credits', String(credits));
        return admin('key', 'create', '--org', name, '--email', `${name}@client.test`, '--scopes', scopes).key as string;
      };
      keys = {
        basic: team('basic', 1000, 'BASIC'),
        poor: team('poor', 1, 'BASIC'),
        tight: team('tight', 1000, 'BASIC'),
        billing: team('billing', 10_000, 'BASIC'),
        streamy: team('streamy', 0, 'PROXY_FIREHOSE'),
      };
      // One stream opening per 100 s: the second opening is a 429 with Retry-After.
      admin('limits', 'set', '--org', 'streamy', '--bucket', 'stream', '--rate', '0.01', '--burst', '1');
      admin('limits', 'set', '--org', 'tight', '--bucket', 'account', '--rate', '0.01', '--burst', '1');
    });
    client = new UmbraClient({ apiKey: u.demoKey, baseUrl: u.origin });
  });
  after(async () => {
    for (const fn of cleanups.reverse()) await fn();
    rmSync(dir, { recursive: true, force: true });
  });

  it('should call every operation with typed answers, the key also taken from UMBRA_API_KEY', async () => {
    const saved = process.env.UMBRA_API_KEY;
    process.env.UMBRA_API_KEY = u.demoKey;
    try {
      const fromEnv = new UmbraClient({ baseUrl: `${u.origin}/api/v4/` });
      const me = await fromEnv.account();
      assert.ok(me.scopes.includes('BASIC') && me.scopes.includes('HONEYPOT_ADB_STREAM'));
      assert.equal(typeof me.lookup_quota.credits, 'number');
    } finally {
      if (saved === undefined) delete process.env.UMBRA_API_KEY;
      else process.env.UMBRA_API_KEY = saved;
    }
    assert.equal((await client.health()).status, 'ok');
    const ip = await client.lookupIpAnswer('8.8.8.8');
    assert.equal(ip.body.ip, '8.8.8.8');
    assert.equal(ip.body.network.asn, 15169);
    assert.equal(typeof ip.creditsRemaining, 'number');
    assert.ok(ip.rateLimit && ip.rateLimit.limit > 0);
    const explained = await client.lookupIp('1.1.1.1', { explain: true });
    assert.ok(explained.evidence, 'explain=true adds the evidence');
    const batch = await client.lookupIps(['1.1.1.1', '1.1.1.1', 'nope', '::ffff:8.8.8.8']);
    assert.deepEqual(
      batch.body.results.map((r) => r.ip),
      ['1.1.1.1', '8.8.8.8'],
    );
    assert.deepEqual(batch.body.invalid, ['nope']);
    const domain = await client.lookupDomain('example.com', { limit: 5 });
    assert.equal(domain.type, 'domain');
    assert.equal(domain.data.domain, 'example.com');
    assert.ok(['ok', 'dormant', 'unknown'].includes(domain.data.status));
  });

  it('should batch any number of addresses by 1,000, concurrently, in input order, with the credits of each batch and nothing charged twice', async () => {
    const billing = new UmbraClient({ apiKey: keys.billing, baseUrl: u.origin, concurrency: 3 });
    const ips = Array.from({ length: 2500 }, (_, i) => `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
    ips.splice(5, 0, 'bogus', ips[3]!, '::ffff:10.0.0.7');
    const before = (await billing.account()).lookup_quota.credits;
    const seen: number[] = [];
    const r = await billing.lookupMany(ips, { onBatch: (b) => seen.push(b.index) });
    assert.equal(r.results.length, ips.length);
    ips.forEach((ip, i) => {
      if (ip === 'bogus') assert.equal(r.results[i], undefined);
      else assert.equal(r.results[i]!.ip, ip.replace('::ffff:', ''), `input ${i} (${ip})`);
    });
    assert.deepEqual(r.invalid, ['bogus']);
    // 2,502 distinct strings: batches of 1,000, 1,000 and 502 (one invalid, one the same address as another).
    assert.deepEqual(
      r.batches.map((b) => [b.index, b.size]),
      [
        [0, 1000],
        [1, 1000],
        [2, 502],
      ],
    );
    assert.deepEqual([...seen].sort(), [0, 1, 2]);
    assert.deepEqual(
      r.batches.map((b) => b.credits),
      [Math.ceil(998 * 0.9), 900, Math.ceil(502 * 0.9)],
    );
    const after = (await billing.account()).lookup_quota.credits;
    assert.equal(before - after, r.credits, 'the credits reported are the credits charged');
  });

  it('should throw a typed error per status with the problem body, Retry-After and RateLimit-*', async () => {
    const bad = new UmbraClient({ apiKey: '00000000-0000-4000-8000-000000000000', baseUrl: u.origin });
    await assert.rejects(
      bad.account(),
      (e: AuthenticationError) => e instanceof AuthenticationError && e.status === 401 && e.problem.status === 401 && e.attempts === 1,
    );

    const poor = new UmbraClient({ apiKey: keys.poor, baseUrl: u.origin });
    await poor.lookupIp('8.8.8.8');
    await assert.rejects(poor.lookupIp('8.8.4.4'), (e: InsufficientCreditsError) => {
      assert.ok(e instanceof InsufficientCreditsError);
      assert.equal(e.status, 402);
      assert.match(e.problem.detail, /credit/i);
      assert.equal(e.attempts, 1, '402 does not heal by waiting: not retried');
      return true;
    });
    assert.equal((await poor.account()).lookup_quota.credits, 0, 'the refused lookup charged nothing');

    const basic = new UmbraClient({ apiKey: keys.basic, baseUrl: u.origin });
    await assert.rejects(
      basic.listSnapshots('anonymizers'),
      (e: PermissionDeniedError) => e instanceof PermissionDeniedError && e.status === 403,
    );
    await assert.rejects(
      client.snapshotMeta('anonymizers', '2020-01-01'),
      (e: NotFoundError) => e instanceof NotFoundError && e.status === 404,
    );
    await assert.rejects(client.listSnapshots('anonymizers', { cursor: 'not-a-cursor' }), (e: ValidationError) => {
      assert.ok(e instanceof ValidationError);
      assert.equal(e.problem.title, 'Validation error');
      assert.ok(e.errors.cursor);
      return true;
    });

    // The tight team's account bucket holds one token, refilled every 100 s: the second call is a 429.
    const clock = recordingClock();
    const tight = new UmbraClient({ apiKey: keys.tight, baseUrl: u.origin, clock, retry: { maxAttempts: 5 } });
    await tight.account();
    await assert.rejects(tight.account(), (e: RateLimitError) => {
      assert.ok(e instanceof RateLimitError);
      assert.equal(e.status, 429);
      assert.ok(e.retryAfter !== undefined && e.retryAfter >= 1);
      assert.deepEqual(e.rateLimit && [e.rateLimit.limit, e.rateLimit.remaining], [1, 0]);
      assert.equal(e.attempts, 5, 'given up after maxAttempts');
      return true;
    });
    assert.equal(clock.sleeps.length, 4);
    for (const s of clock.sleeps) assert.ok(s >= 1000 && s % 1000 === 0, `each wait is the server's Retry-After (${clock.sleeps})`);
  });

  it('should back off 1 s doubling to 60 s with ±25 % jitter from the injected random source, then give up', async () => {
    const closed = await rawServer(undefined);
    closed.server.close();
    for (const [random, factor] of [
      [0, 0.75],
      [0.5, 1],
      [1, 1.25],
    ] as const) {
      const clock = recordingClock();
      const c = new UmbraClient({
        apiKey: 'k',
        baseUrl: `http://127.0.0.1:${closed.port}`,
        clock,
        random: () => random,
        retry: { maxAttempts: 8 },
      });
      await assert.rejects(c.account(), (e: ConnectionError) => e instanceof ConnectionError && e.attempts === 8);
      assert.deepEqual(
        clock.sleeps,
        [1000, 2000, 4000, 8000, 16000, 32000, 60000].map((d) => Math.round(d * factor)),
      );
    }
    assert.throws(() => new UmbraClient({ apiKey: 'k', retry: { maxAttempts: 9 } }), RangeError);
  });

  it('should retry 5xx answers but never resend a billed lookup whose connection broke after it was sent', async () => {
    const body = JSON.stringify({ type: 'about:blank', title: 'Bad gateway', status: 502, detail: 'no backend', error: 'no backend' });
    const gateway = await rawServer(
      `HTTP/1.1 502 Bad Gateway\r\ncontent-type: application/problem+json\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body}`,
    );
    after(() => gateway.server.close());
    const clock = recordingClock();
    const c = new UmbraClient({
      apiKey: 'k',
      baseUrl: `http://127.0.0.1:${gateway.port}`,
      clock,
      random: () => 0.5,
      retry: { maxAttempts: 5 },
    });
    await assert.rejects(
      c.lookupIp('8.8.8.8'),
      (e: ServerError) => e instanceof ServerError && e.status === 502 && e.problem.detail === 'no backend',
    );
    assert.equal(gateway.requests(), 5, 'an error status is never charged: retried');
    assert.deepEqual(clock.sleeps, [1000, 2000, 4000, 8000]);

    const cut = await rawServer(undefined);
    after(() => cut.server.close());
    const c2 = new UmbraClient({
      apiKey: 'k',
      baseUrl: `http://127.0.0.1:${cut.port}`,
      clock: recordingClock(),
      retry: { maxAttempts: 5 },
    });
    await assert.rejects(c2.lookupIps(['8.8.8.8']), ConnectionError);
    assert.equal(cut.requests(), 1, 'a billed lookup cut mid-answer may have been charged: not resent');
    await assert.rejects(c2.account(), ConnectionError);
    assert.equal(cut.requests(), 6, 'a free operation is resent');
  });

  it('should stream typed records, skipping keepalives, reconnecting at once after the server closes, converting timestamps, until aborted', async () => {
    const stop = new AbortController();
    const reconnects: Array<{ reason: string; delayMs: number }> = [];
    const got: Array<{ timestamp: number }> = [];
    const started = Date.now();
    const timer = setTimeout(() => stop.abort(), 4000);
    for await (const rec of client.stream('proxies', { signal: stop.signal, onReconnect: (i) => reconnects.push(i) })) {
      got.push(rec);
      assert.equal(typeof rec.ip, 'string');
    }
    clearTimeout(timer);
    assert.ok(Date.now() - started < 6000, 'the abort ended the iteration');
    assert.ok(got.length > 5, `records arrived (${got.length})`);
    assert.ok(
      reconnects.some((r) => r.reason === 'closed' && r.delayMs === 0),
      'the routine close was followed by an immediate reconnect',
    );
    for (const r of got) assert.ok(Math.abs(r.timestamp - Date.now()) < 3 * 86_400_000, `seconds feed converted to ms: ${r.timestamp}`);

    const adb: number[] = [];
    for await (const rec of client.stream('honeypot_adb', { timestamps: 's' })) {
      adb.push(rec.timestamp);
      if (adb.length === 3) break;
    }
    for (const ts of adb) assert.ok(Math.abs(ts - Date.now() / 1000) < 3 * 86_400, `milliseconds feed converted to s: ${ts}`);

    const basic = new UmbraClient({ apiKey: keys.basic, baseUrl: u.origin });
    await assert.rejects(async () => {
      for await (const _ of basic.stream('proxies')) break;
    }, PermissionDeniedError);
  });

  it('should reconnect a stream after failures with the backoff, honouring Retry-After, and give up after maxAttempts', async () => {
    const clock = recordingClock();
    const streamy = new UmbraClient({ apiKey: keys.streamy, baseUrl: u.origin, clock, retry: { maxAttempts: 5 } });
    for await (const _ of streamy.stream('proxies')) break;
    const failed: Array<{ reason: string; delayMs: number; failures: number }> = [];
    await assert.rejects(
      async () => {
        for await (const _ of streamy.stream('proxies', { onReconnect: (i) => failed.push(i) })) break;
      },
      (e: RateLimitError) => e instanceof RateLimitError && e.retryAfter !== undefined,
    );
    assert.deepEqual(
      failed.map((f) => [f.reason, f.failures]),
      [
        ['failed', 1],
        ['failed', 2],
        ['failed', 3],
        ['failed', 4],
      ],
    );
    for (const f of failed) assert.ok(f.delayMs >= 1000 && f.delayMs % 1000 === 0, `Retry-After honoured: ${f.delayMs}`);
    assert.deepEqual(
      clock.sleeps,
      failed.map((f) => f.delayMs),
    );
  });

  it('should list snapshots across pages, read metadata, and download one verified, without the key at the storage host', async () => {
    const all = [];
    for await (const s of client.snapshots('anonymizers', { pageSize: 1 })) all.push(s);
    const page = await client.listSnapshots('anonymizers', { limit: 500 });
    assert.deepEqual(
      all.map((s) => s.id),
      page.feeds.map((s) => s.id),
    );
    assert.ok(all.length >= 1);
    const id = all[0]!.id;
    const meta = await client.snapshotMeta('anonymizers', id);
    assert.equal(meta.checksum, all[0]!.checksum);

    const file = join(dir, 'a.parquet');
    u.storage.seen.length = 0;
    const progress: number[] = [];
    const r = await client.downloadSnapshot('anonymizers', id, file, { onProgress: (d) => progress.push(d) });
    const bytes = readFileSync(file);
    assert.equal(bytes.length, meta.size);
    assert.equal(sha(bytes), meta.checksum);
    assert.equal(r.sha256, meta.checksum);
    assert.equal(progress.at(-1), meta.size);
    assert.equal(u.storage.seen.length, 1, 'the presigned URL was fetched from the storage host');
    assert.equal(u.storage.seen[0]!['x-api-key'], undefined, 'the API key is never sent to the storage host');

    u.storage.mode = 'corrupt';
    const bad = join(dir, 'bad.parquet');
    await assert.rejects(client.downloadSnapshot('anonymizers', id, bad), (e: IntegrityError) => {
      assert.ok(e instanceof IntegrityError);
      assert.equal(e.expected.sha256, meta.checksum);
      assert.notEqual(e.actual.sha256, meta.checksum);
      assert.equal(e.actual.size, meta.size);
      return true;
    });
    assert.equal(existsSync(bad) || existsSync(`${bad}.part`), false, 'a corrupted file is not kept');
    u.storage.mode = 'pass';
  });

  it('should resume a broken download with Range where the storage host allows it, and start over where it does not', async () => {
    const [first] = (await client.listSnapshots('anonymizers')).feeds;
    const meta = await client.snapshotMeta('anonymizers', first!.id);
    const clock = recordingClock();
    const c = new UmbraClient({ apiKey: u.demoKey, baseUrl: u.origin, clock });
    u.storage.ranges = true;
    u.storage.mode = 'cut';
    u.storage.seen.length = 0;
    const file = join(dir, 'resumed.parquet');
    const r = await c.downloadSnapshot('anonymizers', first!.id, file);
    assert.equal(r.resumedFrom, meta.size >> 1);
    assert.equal(sha(readFileSync(file)), meta.checksum);
    assert.equal(u.storage.seen.at(-1)!.range, `bytes=${meta.size >> 1}-`);
    assert.equal(clock.sleeps.length, 1, 'one backoff before the resumed attempt');

    // A part file against a host without ranges: the whole body again, still verified.
    u.storage.ranges = false;
    const again = join(dir, 'again.parquet');
    writeFileSync(`${again}.part`, readFileSync(file).subarray(0, 100));
    const r2 = await c.downloadSnapshot('anonymizers', first!.id, again);
    assert.equal(r2.resumedFrom, 0);
    assert.equal(sha(readFileSync(again)), meta.checksum);
  });
});
