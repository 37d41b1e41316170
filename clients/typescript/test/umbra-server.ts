import { request as httpRequest, createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { startServe, type ServeProcess } from '../../../test/helpers/serve-process.ts';
import { ensureRealDataset } from '../../../test/helpers/test-dataset.ts';
import { umbraCli } from '../../../test/helpers/umbra-cli.ts';
import type { Clock } from '../src/retry.ts';

/**
 * A real `umbra serve --demo` (bin/umbra.js on the build) on a fresh data dir: the demo key with every
 * scope, the simulator publishing records, export jobs on; streams closed after `lifetimeMs` so a
 * test sees the routine close. Downloads are linked through `storage`, a relay standing for the
 * storage host on another host name, which records what clients send it and can damage the bytes.
 */
export interface UmbraUnderTest {
  serve: ServeProcess;
  dataDir: string;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  demoKey: string;
  storage: StorageRelay;
  /** An `umbra admin ... --json` verb on the server's data dir. */
  admin(...args: string[]): any;
}

export async function startUmbra(
  t: TestContext,
  prepare: (admin: UmbraUnderTest['admin']) => void = () => {},
  env: Record<string, string> = {},
): Promise<UmbraUnderTest> {
  const dataDir = mkdtempSync(join(tmpdir(), 'umbra-client-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
  const admin = (...args: string[]) => {
    const r = umbraCli(dataDir, ['admin', ...args]);
    if (r.code !== 0) throw new Error(`umbra admin ${args.join(' ')}: ${r.code} ${r.stderr}`);
    return r.json;
  };
  prepare(admin);
  const storage = await storageRelay(t);
  // The demo backfills 48 hours at the simulator's rate before it serves: 8 (a record per feed about
  // every 0.6 s) keeps that short while a stream test still sees records within a second.
  const serve = await startServe(
    t,
    dataDir,
    ['--demo'],
    {
      UMBRA_SIMULATOR_RATE: '8',
      UMBRA_EXPORT_JOBS: 'on',
      UMBRA_STREAM_LIFETIME_MS: '1500',
      UMBRA_PUBLIC_URL: `http://localhost:${storage.port}`,
      ...env,
    },
    240_000,
  );
  storage.target = serve.port;
  const demoKey = (await serve.line(/demo API key \(every scope\): (\S+)/))[1]!;
  return { serve, dataDir, origin: serve.origin, demoKey, storage, admin };
}

export interface StorageRelay {
  port: number;
  /** umbra's port, where requests are relayed. */
  target: number;
  /** Request headers of every request received. */
  seen: IncomingMessage['headers'][];
  /**
   * `pass` relays; `corrupt` flips one byte of the body; `cut` sends half the body and breaks the
   * connection (once, then `pass`); with `ranges` a `Range: bytes=N-` is answered 206 from byte N.
   */
  mode: 'pass' | 'corrupt' | 'cut';
  ranges: boolean;
}

async function storageRelay(t: TestContext): Promise<StorageRelay> {
  const relay: StorageRelay = { port: 0, target: 0, seen: [], mode: 'pass', ranges: false };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    relay.seen.push(req.headers);
    const { range: _range, ...headers } = req.headers;
    const up = httpRequest({ host: '127.0.0.1', port: relay.target, path: req.url, method: req.method, headers }, (answer) => {
      const chunks: Buffer[] = [];
      answer.on('data', (c: Buffer) => chunks.push(c));
      answer.on('end', () => {
        let body = Buffer.concat(chunks);
        const out: Record<string, string | number> = {};
        for (const h of ['content-type', 'etag', 'cache-control']) if (answer.headers[h]) out[h] = answer.headers[h] as string;
        const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
        let status = answer.statusCode ?? 502;
        if (status === 200 && relay.ranges && m && Number(m[1]) < body.length) {
          const from = Number(m[1]);
          out['content-range'] = `bytes ${from}-${body.length - 1}/${body.length}`;
          body = body.subarray(from);
          status = 206;
        }
        if (status === 200 && relay.mode === 'corrupt') {
          body = Buffer.from(body);
          body[body.length >> 1] = body[body.length >> 1]! ^ 0xff;
        }
        out['content-length'] = body.length;
        res.writeHead(status, out);
        if (status === 200 && relay.mode === 'cut') {
          relay.mode = 'pass';
          res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => res.socket?.destroy(), 20));
          return;
        }
        res.end(body);
      });
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  relay.port = (server.address() as AddressInfo).port;
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return relay;
}

/** A clock whose sleeps return at once and are recorded: the backoff schedule without the wait. */
export function recordingClock(): Clock & { sleeps: number[] } {
  const sleeps: number[] = [];
  let now = 0;
  return {
    sleeps,
    now: () => now,
    sleep: async (ms, signal) => {
      if (signal?.aborted) throw signal.reason;
      sleeps.push(ms);
      now += ms;
    },
  };
}
