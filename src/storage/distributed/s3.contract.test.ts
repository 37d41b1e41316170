import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SignatureV4 } from '@smithy/signature-v4';
import { asAppError, STATUS } from '../../errors.ts';
import { ManualClock } from '../../lib/clock.ts';
import { isValidKey } from '../../modules/exports/object-store.ts';
import { objectStoreContract } from '../contract/object-store.contract.ts';
import { startS3Server, type TestS3 } from '../../../test/helpers/s3-server.ts';
import { uniqueTestName } from '../../../test/helpers/engines.ts';
import { S3ObjectStore, type S3ObjectStoreOptions } from './s3-object-store.ts';

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const H = 3_600_000;
const DAY_S = 86_400;
const KEY = 'anonymizers/latest/05_anonymizers.parquet';

let s3: TestS3;
let raw: S3Client;
const stores: S3ObjectStore[] = [];
before(async () => {
  s3 = await startS3Server();
  raw = new S3Client({ region: 'us-east-1', endpoint: s3.endpoint, forcePathStyle: true, credentials: s3.credentials });
});
after(async () => {
  for (const s of stores) s.close();
  raw.destroy();
  await s3.close();
});

/** A store on the test server under a key prefix of its own, so tests share the bucket without meeting. */
function makeStore(extra: Partial<S3ObjectStoreOptions> = {}): { store: S3ObjectStore; prefix: string } {
  const prefix = `${uniqueTestName('t')}/`;
  const store = new S3ObjectStore({
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    forcePathStyle: true,
    credentials: s3.credentials,
    keyPrefix: prefix,
    ...extra,
  });
  stores.push(store);
  return { store, prefix };
}

/** Every key under a prefix as the bucket holds it (pointers, content objects, release markers). */
async function rawKeys(prefix: string): Promise<string[]> {
  const out = await raw.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
  return (out.Contents ?? []).map((o) => o.Key!.slice(prefix.length)).sort();
}

const bytesOf = async (r: Readable | undefined): Promise<Buffer> => {
  assert.ok(r);
  const parts: Buffer[] = [];
  for await (const c of r) parts.push(c as Buffer);
  return Buffer.concat(parts);
};

// The port's contract, the presignGet part included (its URLs fetched with plain fetch).
objectStoreContract('s3 (s3rver)', async () => {
  const { store, prefix } = makeStore();
  return {
    store,
    // Bytes uploaded that no pointer names: what a failed put must never leave.
    leftovers: async () => (await rawKeys(prefix)).filter((k) => !isValidKey(k)),
    close: async () => {},
  };
});

describe('S3ObjectStore on s3rver', () => {
  it('should lay objects out as pointers naming content objects whose key holds the checksum', async () => {
    const { store, prefix } = makeStore();
    const one = Buffer.from('PAR1 one PAR1');
    const two = Buffer.from('PAR1 two, other bytes PAR1');
    await store.putBytes(KEY, one, { sha256: sha(one), rows: 1 });
    await store.putBytes(KEY, two, { sha256: sha(two), rows: 2 });
    assert.deepEqual(await rawKeys(prefix), [
      `.objects/anonymizers/latest/${sha(one)}/05_anonymizers.parquet`,
      `.objects/anonymizers/latest/${sha(two)}/05_anonymizers.parquet`,
      `.released/anonymizers/latest/${sha(one)}/05_anonymizers.parquet`,
      KEY,
    ]);
    assert.deepEqual(await store.list(''), [KEY], 'the content objects and markers are not objects of the port');
  });

  it('should presign a 24-hour GET that a plain fetch follows: exact bytes, their metadata, the file name, only host signed', async () => {
    const { store } = makeStore();
    const bytes = Buffer.from('PAR1 the hour as parquet PAR1');
    await store.putBytes(KEY, bytes, { sha256: sha(bytes), rows: 7, contentType: 'application/vnd.apache.parquet' });
    const url = await store.presignGet({ key: KEY, sha256: sha(bytes) }, DAY_S);
    const q = new URL(url).searchParams;
    assert.equal(q.get('X-Amz-Expires'), '86400');
    assert.equal(q.get('X-Amz-SignedHeaders'), 'host', 'a client sends nothing but the URL');
    const res = await fetch(url);
    assert.equal(res.status, 200);
    const got = Buffer.from(await res.arrayBuffer());
    assert.equal(sha(got), sha(bytes));
    assert.equal(res.headers.get('x-amz-meta-sha256'), sha(bytes));
    assert.equal(res.headers.get('x-amz-meta-rows'), '7');
    assert.equal(res.headers.get('content-type'), 'application/vnd.apache.parquet');
    assert.equal(res.headers.get('content-disposition'), 'attachment; filename="05_anonymizers.parquet"');
    await assert.rejects(store.presignGet({ key: KEY, sha256: sha(bytes) }, DAY_S + 1), /1 to 86400 s/);
  });

  it('should keep serving the bytes a URL was issued for after the key is replaced or deleted, until the sweep after its expiry', async () => {
    const clock = new ManualClock(Date.now());
    const { store, prefix } = makeStore({ clock });
    const yesterday = Buffer.from('PAR1 yesterday 05 PAR1');
    const today = Buffer.from('PAR1 today 05, other bytes PAR1');
    await store.putBytes(KEY, yesterday, { sha256: sha(yesterday), rows: 1 });
    const old = await store.presignGet({ key: KEY, sha256: sha(yesterday) }, DAY_S);
    await store.putBytes(KEY, today, { sha256: sha(today), rows: 2 });
    const fresh = await store.presignGet({ key: KEY, sha256: sha(today) }, DAY_S);
    const fetched = async (url: string) => {
      const res = await fetch(url);
      return { status: res.status, sha: sha(Buffer.from(await res.arrayBuffer())) };
    };
    assert.deepEqual(await fetched(old), { status: 200, sha: sha(yesterday) }, 'the old URL serves the old bytes, not the new');
    assert.deepEqual(await fetched(fresh), { status: 200, sha: sha(today) });

    // Within the URL lifetime plus an hour, nothing goes; the released bytes are marked.
    // (S3 dates objects to the second, hence the margins of seconds.)
    clock.advance(DAY_S * 1000 + H - 10_000);
    assert.equal(await store.sweepReleased(), 0);
    assert.deepEqual(await fetched(old), { status: 200, sha: sha(yesterday) });
    clock.advance(20_000);
    assert.equal(await store.sweepReleased(), 1);
    assert.equal((await fetched(old)).status, 404, 'swept once no URL for them can be valid');
    assert.deepEqual(await fetched(fresh), { status: 200, sha: sha(today) }, 'the bytes the key names stay');
    assert.deepEqual(await rawKeys(prefix), [`.objects/anonymizers/latest/${sha(today)}/05_anonymizers.parquet`, KEY]);

    // A delete releases the bytes too: they stay for the URLs issued, then go. (The store's clock back
    // to the server's: the marker is dated by S3.)
    clock.set(Date.now());
    await store.delete(KEY);
    assert.deepEqual(await fetched(fresh), { status: 200, sha: sha(today) });
    assert.equal(await store.sweepReleased(), 0);
    clock.advance(DAY_S * 1000 + H + 20_000);
    assert.equal(await store.sweepReleased(), 1);
    assert.deepEqual(await rawKeys(prefix), []);
  });

  it('should sweep uploaded bytes no pointer ever named (a put cut short) only once that old, and never the bytes a key names', async () => {
    const clock = new ManualClock(Date.now());
    const { store, prefix } = makeStore({ clock });
    const live = Buffer.from('PAR1 the daily file, named for years PAR1');
    await store.putBytes('anonymizers/2026/11/21/anonymizers.parquet', live, { sha256: sha(live), rows: 1 });
    const orphan = Buffer.from('uploaded, then the process died');
    await raw.send(
      new PutObjectCommand({
        Bucket: s3.bucket,
        Key: `${prefix}.objects/anonymizers/latest/${sha(orphan)}/01_anonymizers.parquet`,
        Body: orphan,
      }),
    );
    assert.equal(await store.sweepReleased(), 0, 'it may be a put still running');
    clock.advance(30 * DAY_S * 1000);
    assert.equal(await store.sweepReleased(), 1);
    assert.deepEqual(
      await rawKeys(prefix),
      ['anonymizers/2026/11/21/anonymizers.parquet', `.objects/anonymizers/2026/11/21/${sha(live)}/anonymizers.parquet`].sort(),
    );
    assert.equal(sha(await bytesOf(await store.get('anonymizers/2026/11/21/anonymizers.parquet'))), sha(live));
  });

  it('should refuse an expired URL (s3rver enforces the expiry)', async () => {
    const { store } = makeStore({ clock: new ManualClock(Date.now() - DAY_S * 1000 - 60_000) });
    const bytes = Buffer.from('signed a day and a minute ago');
    await store.putBytes(KEY, bytes, { sha256: sha(bytes), rows: 1 });
    const res = await fetch(await store.presignGet({ key: KEY, sha256: sha(bytes) }, DAY_S));
    assert.equal(res.status, 403);
    const body = await res.text();
    assert.match(body, /expired/i);
    assert.equal(body.includes('signed a day'), false);
  });

  it('should upload a file larger than a part as a multipart upload, and complete none whose checksum is wrong', async () => {
    const { store, prefix } = makeStore({ partSizeBytes: 5 << 20 });
    const dir = mkdtempSync(join(tmpdir(), 'umbra-s3-big-'));
    try {
      const big = Buffer.alloc(11 << 20);
      for (let i = 0; i < big.length; i += 4096) big[i] = i % 251;
      writeFileSync(join(dir, 'big.parquet'), big);
      const info = await store.putFile('anonymizers/2026/11/20/anonymizers.parquet', join(dir, 'big.parquet'), {
        sha256: sha(big),
        rows: 3,
      });
      assert.equal(info.size, big.length);
      const read = await store.read('anonymizers/2026/11/20/anonymizers.parquet');
      assert.equal(read?.info.size, big.length);
      assert.equal(sha(await bytesOf(read?.body)), sha(big));
      big[big.length - 1] = 1;
      writeFileSync(join(dir, 'bad.parquet'), big);
      await assert.rejects(
        store.putFile('anonymizers/2026/11/19/anonymizers.parquet', join(dir, 'bad.parquet'), { sha256: sha(Buffer.alloc(1)), rows: 3 }),
        /checksum mismatch/,
      );
      assert.equal(await store.head('anonymizers/2026/11/19/anonymizers.parquet'), undefined);
      assert.deepEqual(
        (await rawKeys(prefix)).filter((k) => k.includes('/19/')),
        [],
        'no object, not even a content object',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** SHA-256 for the SDK signer, from node:crypto (the signer takes a hash class). */
type Data = string | ArrayBuffer | ArrayBufferView;
const bytes = (d: Data): string | Uint8Array =>
  typeof d === 'string' ? d : d instanceof ArrayBuffer ? new Uint8Array(d) : new Uint8Array(d.buffer, d.byteOffset, d.byteLength);
class Sha256 {
  private h: ReturnType<typeof createHash> | ReturnType<typeof createHmac>;
  constructor(private readonly secret?: Data) {
    this.h = this.fresh();
  }
  private fresh() {
    return this.secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(this.secret));
  }
  update(data: Data): void {
    this.h.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.h.digest());
  }
  reset(): void {
    this.h = this.fresh();
  }
}

describe('S3ObjectStore download URLs are valid SigV4 (s3rver does not check signatures)', () => {
  const credentials = { accessKeyId: 'AKIAUMBRATEST', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' };
  const signedAt = Date.UTC(2026, 10, 22, 12, 0, 7);
  const store = new S3ObjectStore({
    bucket: 'umbra-exports',
    region: 'eu-central-1',
    endpoint: 'https://s3.example.test',
    forcePathStyle: true,
    credentials,
    keyPrefix: 'prod',
    clock: new ManualClock(signedAt),
  });
  after(() => store.close());
  const signer = new SignatureV4({ credentials, region: 'eu-central-1', service: 's3', sha256: Sha256, uriEscapePath: false });

  /** The signature the SDK's own signer gives the URL's host, path and query (all but the signature) at the URL's time. */
  async function recompute(url: string): Promise<string> {
    const u = new URL(url);
    const query: Record<string, string> = {};
    for (const [k, v] of u.searchParams) if (!k.startsWith('X-Amz-')) query[k] = v;
    const expires = Number(u.searchParams.get('X-Amz-Expires'));
    const d = /^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/
      .exec(u.searchParams.get('X-Amz-Date') ?? '')!
      .slice(1)
      .map(Number);
    const signingDate = new Date(Date.UTC(d[0]!, d[1]! - 1, d[2], d[3], d[4], d[5]));
    const presigned = await signer.presign(
      {
        method: 'GET',
        protocol: u.protocol,
        hostname: u.hostname,
        path: u.pathname,
        query,
        // The SDK hoists this header into the query under the name it gave it: the query is signed as sent.
        headers: { host: u.host, 'X-Amz-Content-Sha256': u.searchParams.get('X-Amz-Content-Sha256') ?? 'UNSIGNED-PAYLOAD' },
      },
      { signingDate, expiresIn: expires },
    );
    return String(presigned.query?.['X-Amz-Signature']);
  }

  it('should sign what the SDK signer signs for the same credentials and time, 86400 s, and nothing else', async () => {
    const target = { key: KEY, sha256: sha(Buffer.from('x')) };
    const url = await store.presignGet(target, DAY_S);
    const u = new URL(url);
    assert.equal(u.pathname, `/umbra-exports/prod/.objects/anonymizers/latest/${target.sha256}/05_anonymizers.parquet`);
    assert.equal(u.searchParams.get('X-Amz-Expires'), '86400');
    assert.equal(u.searchParams.get('X-Amz-Date'), '20261122T120007Z');
    assert.equal(u.searchParams.get('X-Amz-Credential'), 'AKIAUMBRATEST/20261122/eu-central-1/s3/aws4_request');
    assert.equal(u.searchParams.get('X-Amz-SignedHeaders'), 'host');
    const sig = u.searchParams.get('X-Amz-Signature');
    assert.match(sig ?? '', /^[0-9a-f]{64}$/);
    assert.equal(await recompute(url), sig, 'the signature matches');

    // One changed byte anywhere that is signed gives another signature.
    const otherSha = url.replace(target.sha256, `${target.sha256.slice(0, -1)}${target.sha256.endsWith('0') ? '1' : '0'}`);
    assert.notEqual(await recompute(otherSha), sig, 'path: the checksum');
    assert.notEqual(await recompute(url.replace('/05_anonymizers', '/06_anonymizers')), sig, 'path: the file');
    assert.notEqual(await recompute(url.replace('filename%3D%2205_', 'filename%3D%2206_')), sig, 'query: the file name');
    assert.notEqual(await recompute(url.replace('X-Amz-Expires=86400', 'X-Amz-Expires=86401')), sig, 'query: the expiry');
    assert.notEqual(await recompute(url.replace('20261122T120007Z', '20261122T120008Z')), sig, 'query: the time');
  });

  it('should sign for the public endpoint when one is set', async () => {
    const pub = new S3ObjectStore({
      bucket: 'umbra-exports',
      endpoint: 'http://minio:9000',
      publicEndpoint: 'https://downloads.example.test',
      forcePathStyle: true,
      credentials,
      clock: new ManualClock(signedAt),
    });
    try {
      const url = new URL(await pub.presignGet({ key: KEY, sha256: sha(Buffer.from('x')) }, DAY_S));
      assert.equal(url.host, 'downloads.example.test');
    } finally {
      pub.close();
    }
  });
});

describe('S3ObjectStore when S3 cannot be reached', () => {
  /** A port nothing listens on. */
  const closedPort = async (): Promise<number> => {
    const srv = createServer();
    await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
    const { port } = srv.address() as { port: number };
    await new Promise((r) => srv.close(r));
    return port;
  };
  const unreachable = (port: number, extra: Partial<S3ObjectStoreOptions> = {}) =>
    new S3ObjectStore({ bucket: 'b', endpoint: `http://127.0.0.1:${port}`, forcePathStyle: true, credentials: s3.credentials, ...extra });

  /** Runs `op`, expecting a rejection within `boundMs` that the transports answer with 503. */
  async function failsFast(op: () => Promise<unknown>, boundMs: number, what: string): Promise<number> {
    const t0 = performance.now();
    const err = await op().then(
      () => assert.fail(`${what} should have failed`),
      (e: unknown) => e,
    );
    const ms = performance.now() - t0;
    assert.ok(ms < boundMs, `${what} failed after ${Math.round(ms)} ms, bound ${boundMs} ms`);
    const app = asAppError(err);
    assert.equal(app.code, 'UNAVAILABLE', `${what}: ${(err as Error).message}`);
    assert.equal(STATUS[app.code].http, 503);
    assert.match(app.message, /object store is unavailable/);
    assert.equal(app.message.includes('127.0.0.1'), false, 'the address is not told to clients');
    return ms;
  }

  it('should reject put, head, read, list and delete within the bound with a 503 fault on a closed port (defaults: 3 attempts)', async () => {
    const store = unreachable(await closedPort());
    const dir = mkdtempSync(join(tmpdir(), 'umbra-s3-down-'));
    try {
      const b = Buffer.from('bytes');
      writeFileSync(join(dir, 'f'), b);
      const meta = { sha256: sha(b), rows: 1 };
      // Refused connections are retried with backoff (the SDK's standard retry), all within seconds.
      const bound = 5_000;
      await failsFast(() => store.putBytes(KEY, b, meta), bound, 'putBytes');
      await failsFast(() => store.putFile(KEY, join(dir, 'f'), meta), bound, 'putFile');
      await failsFast(() => store.head(KEY), bound, 'head');
      await failsFast(() => store.read(KEY), bound, 'read');
      await failsFast(() => store.list('anonymizers/'), bound, 'list');
      await failsFast(() => store.delete(KEY), bound, 'delete');
    } finally {
      store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should give up on a server that accepts connections but never answers, after its request bound and attempts', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((s) => {
      sockets.add(s);
      s.on('error', () => {});
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as { port: number };
    const store = unreachable(port, { timeouts: { requestMs: 300, uploadMs: 300 }, maxAttempts: 2 });
    try {
      const b = Buffer.from('bytes');
      // 2 attempts of 300 ms plus the backoff between them.
      const ms = await failsFast(() => store.head(KEY), 2_500, 'head');
      assert.ok(ms >= 550, `both attempts waited their bound (${Math.round(ms)} ms)`);
      await failsFast(() => store.putBytes(KEY, b, { sha256: sha(b), rows: 1 }), 2_500, 'putBytes');
    } finally {
      store.close();
      for (const s of sockets) s.destroy();
      await new Promise((r) => silent.close(r));
    }
  });
});
