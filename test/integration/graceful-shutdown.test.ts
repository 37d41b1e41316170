import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ensureRealDataset } from '../helpers/test-dataset.ts';
import { SEMI_SPACE_FLAG } from '../../src/lib/young-generation.ts';

const BIN = join(import.meta.dirname, '../../bin/umbra.js');

/** Reads one HTTP/1.1 response (headers, then exactly content-length bytes of body) from a raw socket. */
function readResponse(socket: Socket): Promise<{ head: string; body: string }> {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buf = Buffer.concat([buf, chunk]);
      const end = buf.indexOf('\r\n\r\n');
      if (end === -1) return;
      const head = buf.subarray(0, end).toString('latin1');
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1]);
      if (buf.length - end - 4 < length) return;
      socket.off('data', onData);
      resolve({ head, body: buf.subarray(end + 4, end + 4 + length).toString('utf8') });
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.once('close', () => reject(new Error(`connection closed before a whole response: ${buf.toString('latin1').slice(0, 200)}`)));
  });
}

/** Resolves with the error code of a fresh connection attempt, or 'connected'. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve('connected');
    });
    s.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });
}

describe('umbra serve shutdown (real process)', () => {
  it('should finish a request in flight when SIGTERM arrives, refuse new connections, then exit 0 without waiting for idle or unused connections', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'umbra-shutdown-'));
    t.after(() => rmSync(dataDir, { recursive: true, force: true }));
    symlinkSync(await ensureRealDataset(), join(dataDir, 'ip-dataset.bin'));
    // Started as `npm start` starts it (with the young-generation flag), so it gives no advice about it.
    const server = spawn(
      process.execPath,
      [SEMI_SPACE_FLAG, BIN, 'serve', '--demo', '--http-port', '0', '--grpc-port', '0', '--data-dir', dataDir],
      {
        stdio: ['ignore', 'ignore', 'pipe'],
        env: { ...process.env, UMBRA_LOG_LEVEL: 'warn', UMBRA_SIMULATOR_RATE: '0', UMBRA_EXPORT_JOBS: 'off', UMBRA_SHUTDOWN_GRACE_S: '20' },
      },
    );
    const exited = new Promise<number | null>((r) => server.once('exit', (code) => r(code)));
    t.after(() => server.kill('SIGKILL'));
    const lines: string[] = [];
    const rl = createInterface({ input: server.stderr! });
    const sawLine = (re: RegExp) =>
      new Promise<RegExpExecArray>((resolve, reject) => {
        const check = (line: string) => {
          const m = re.exec(line);
          if (m) {
            rl.off('line', check);
            resolve(m);
          }
        };
        for (const l of lines) if (re.test(l)) return resolve(re.exec(l)!);
        rl.on('line', check);
        server.once('exit', () => reject(new Error(`server exited before ${re}:\n${lines.join('\n')}`)));
      });
    rl.on('line', (l) => lines.push(l));
    const port = Number((await sawLine(/serving http:\/\/127\.0\.0\.1:(\d+)\/api\/v4/))[1]);
    const key = (await sawLine(/demo API key \(every scope\): (\S+)/))[1]!;
    assert.equal(lines.filter((l) => /semi-spaces/.test(l)).join('\n'), '', 'no young-generation advice when started with the flag');

    // A batch lookup whose body is still arriving: fastify has routed it and waits for the rest.
    const body = JSON.stringify({ ips: ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888'] });
    const inFlight = connect(port, '127.0.0.1');
    await new Promise((r) => inFlight.once('connect', r));
    const response = readResponse(inFlight);
    inFlight.write(
      `POST /api/v4/lookup/ips HTTP/1.1\r\nhost: 127.0.0.1\r\nx-api-key: ${key}\r\ncontent-type: application/json\r\ncontent-length: ` +
        `${Buffer.byteLength(body)}\r\n\r\n`,
    );
    inFlight.write(body.slice(0, 10));
    // A connection that never sends a request (a browser's preconnect, a pool's spare): node's own idle
    // check does not close it, and it held the close until the grace period ended.
    const unused = connect(port, '127.0.0.1');
    await new Promise((r) => unused.once('connect', r));
    const unusedClosed = new Promise<void>((r) => unused.once('close', () => r()));
    unused.on('error', () => {});
    await new Promise((r) => setTimeout(r, 200));

    server.kill('SIGTERM');
    await sawLine(/SIGTERM: finishing in-flight requests/);
    // The listener closes within moments; the request in flight keeps its connection meanwhile.
    let attempt = '';
    for (let i = 0; i < 50 && attempt !== 'ECONNREFUSED'; i++) {
      attempt = await tryConnect(port);
      if (attempt !== 'ECONNREFUSED') await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(attempt, 'ECONNREFUSED', 'new connections are refused once shutdown began');
    assert.equal(server.exitCode, null, 'still running: a request is in flight');

    inFlight.write(body.slice(10));
    const { head, body: answer } = await response;
    assert.match(head, /^HTTP\/1\.1 200 /);
    assert.match(head, /x-credits-remaining: \d+/i);
    const parsed = JSON.parse(answer);
    assert.deepEqual(
      parsed.results.map((r: { ip: string }) => r.ip),
      ['8.8.8.8', '1.1.1.1', '2001:4860:4860::8888'],
    );
    assert.match(head, /\r\nconnection: close\r\n/i, 'the kept-alive connection is not offered for reuse while closing');
    // The client keeps its end open (as a pooled keep-alive client would): the server still exits at
    // once, not at the end of the grace period.
    const started = Date.now();
    assert.equal(await exited, 0, `clean exit after the last response:\n${lines.join('\n')}`);
    assert.ok(Date.now() - started < 10_000, 'exit well before the 20 s grace period');
    await unusedClosed;
    inFlight.destroy();
  });
});
