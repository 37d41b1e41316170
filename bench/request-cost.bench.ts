// The CPU one GET /lookup/ip/{ip} costs umbra's own JavaScript, measured in-process without the
// kernel or a client: requests are handed to the raw HTTP/1.1 reader (http/raw-http1.ts) through a
// socket stand-in that takes the answer bytes and drops them, one request per 'data' event as wrk
// sends them. process.cpuUsage() over 100,000 requests per round, alternating rounds of:
//   fixed   8.8.8.8 every time (every record, JSON and memo already at hand): the baseline;
//   random  random routed IPv4 addresses (the C-client bench's list, same seed), each round going on
//           where the previous stopped, after a warm-up of 200,000 of them.
// The ratio random / fixed is the cost of a fresh address: the part of the C-client bench's warm
// random figure that is umbra's own (the kernel's TCP work is the same for both and for bare).
// Far less noisy than a load test on two cores (nothing else is measured), so it shows a change of
// a few hundred nanoseconds per request; it says nothing about sockets, which the C-client bench does.
// And the batch lookup's own CPU per address, without HTTP: the C-client bench's 100 batches of 1,000
// (4 IPv4 to 1 IPv6), each planned (parsed, deduplicated, priced), charged, looked up and written
// as the route does it (routes/lookup-ips.ts: lookupIpsPacked and the route's 200 serializer), in
// rounds over all 100, after one round to warm up; the lookups and the writing timed apart, and the writing again for one batch's answer
// over and over, whose records are then in the CPU's caches (what the writing costs without waiting
// for memory).
// Environment: UMBRA_BENCH_ROUNDS (3).
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config.ts';
import { loadDataset } from '../src/modules/dataset/dataset-reader.ts';
import { ensureRealDataset } from '../test/helpers/test-dataset.ts';
import { BENCH_SEED, routedAddresses, routedBatches } from '../test/helpers/routed-addresses.ts';
import { batchSerializer, frozenPartsWriter, packedResultsWriter, type Serialize } from '../src/http/frozen-parts-json.ts';
import { BatchResult, IpResult } from '../src/http/schemas.ts';
import { Type, type TSchema } from 'typebox';

const ROUNDS = Number(process.env.UMBRA_BENCH_ROUNDS ?? 3);
const PER_ROUND = 100_000;
const WARM_UP = 200_000;

/** What the raw reader uses of a socket; answers are counted by their status lines and dropped. */
class SocketStandIn extends EventEmitter {
  destroyed = false;
  answers = 0;
  bytes = 0;
  statuses = new Map<string, number>();
  setNoDelay(): this {
    return this;
  }
  setTimeout(): this {
    return this;
  }
  write(chunk: string | Buffer): boolean {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('latin1');
    this.bytes += text.length;
    // Pipelined answers may come in one write: count every status line.
    for (let at = text.indexOf('HTTP/1.1 '); at !== -1; at = text.indexOf('HTTP/1.1 ', at + 9)) {
      this.answers++;
      const status = text.slice(at + 9, at + 12);
      this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
    }
    return true;
  }
  end(): this {
    return this;
  }
  destroy(): this {
    this.destroyed = true;
    return this;
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function benchRequestCost(): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-cost-'));
  // No demo traffic and no export jobs: their work (and the serializers they compile) would land in the rounds.
  const config = parseConfig({ UMBRA_DATA_DIR: dir, UMBRA_LOG_LEVEL: 'warn', UMBRA_SIMULATOR_RATE: '0', UMBRA_EXPORT_JOBS: 'off' });
  const app = await buildApp(config, {
    dataset: loadDataset(await ensureRealDataset()),
    datasetRefreshMs: 3_600_000,
    fastPath: true,
  });
  try {
    const org = await app.services.admin.createOrg({ name: 'bench', credits: 1e12 });
    for (const bucket of ['lookup', 'domain', 'account']) await app.services.admin.setLimit(org.id, bucket, { rate: 1e6, burst: 1e6 });
    const { secret } = await app.services.admin.createKey({ org: org.id, email: 'bench@umbra.local', scopes: ['BASIC'] });
    // Listening makes the server the app serves with (and the raw reader in front of it) ready.
    await app.http.listen({ port: 0, host: '127.0.0.1' });
    const socket = new SocketStandIn();
    app.http.server.emit('connection', socket as unknown as Socket);

    const request = (ip: string) => Buffer.from(`GET /api/v4/lookup/ip/${ip} HTTP/1.1\r\nHost: bench\r\nx-api-key: ${secret}\r\n\r\n`);
    /** CPU ns per request for `ips`, every one answered 200 (checked). */
    const round = async (ips: string[]): Promise<number> => {
      const heads = ips.map(request);
      const before = socket.answers;
      const ok = socket.statuses.get('200') ?? 0;
      const cpu = process.cpuUsage();
      for (let i = 0; i < heads.length; i++) {
        socket.emit('data', heads[i]);
        // Let timers and I/O callbacks run now and then, as they would between reads.
        if ((i & 1023) === 1023) await new Promise((r) => setImmediate(r));
      }
      await new Promise((r) => setImmediate(r));
      const used = process.cpuUsage(cpu);
      const answered = socket.answers - before;
      const good = (socket.statuses.get('200') ?? 0) - ok;
      if (answered !== ips.length || good !== ips.length)
        throw new Error(`${ips.length} requests: ${answered} answers, ${good} of them 200 (${JSON.stringify([...socket.statuses])})`);
      return ((used.user + used.system) * 1000) / ips.length;
    };

    const random = routedAddresses('v4', WARM_UP + ROUNDS * PER_ROUND, BENCH_SEED);
    const fixed = new Array<string>(PER_ROUND).fill('8.8.8.8');
    const warmUp = await round(random.slice(0, WARM_UP));
    const f: number[] = [];
    const r: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      f.push(await round(fixed));
      const from = WARM_UP + i * PER_ROUND;
      r.push(await round(random.slice(from, from + PER_ROUND)));
    }
    const mf = median(f);
    const mr = median(r);

    // The batch, as the route answers it (its serializer made as the route makes it once fastify is ready).
    const verified = await app.services.accounts.verifyKey(secret);
    if (!verified.ok) throw new Error(`the bench key was refused: ${verified.reason}`);
    const compiler = app.http.serializerCompiler!;
    const compile = (schema: TSchema) => compiler({ schema, method: 'POST', url: '/lookup/ips', httpStatus: '200' }) as Serialize;
    const item = frozenPartsWriter(IpResult, compile, compile(Type.Ref('IpResult')));
    const answer = batchSerializer(item, compile(BatchResult), packedResultsWriter(IpResult, item));
    const batches = routedBatches(100, BENCH_SEED);
    let answerBytes = 0;
    const nsPerAddress = (used: NodeJS.CpuUsage) => ((used.user + used.system) * 1000) / (batches.length * 1000);
    /** One round over the 100 batches: the lookups (plan, charge, resolve) and the writing of the answers, each timed. */
    const batchRound = async (): Promise<{ lookups: number; write: number }> => {
      answerBytes = 0;
      const values: unknown[] = [];
      let cpu = process.cpuUsage();
      for (const ips of batches) values.push((await app.services.lookup.lookupIpsPacked(verified.caller, ips)).value);
      const lookups = nsPerAddress(process.cpuUsage(cpu));
      cpu = process.cpuUsage();
      for (const v of values) answerBytes += answer(v).length;
      return { lookups, write: nsPerAddress(process.cpuUsage(cpu)) };
    };
    await batchRound();
    const b: Array<{ lookups: number; write: number }> = [];
    for (let i = 0; i < ROUNDS; i++) b.push(await batchRound());
    // The first batch's answer written as many times as there are batches: the same 1,000 results, whose
    // records and JSON are then in the CPU's caches. Against the round's writing of 100 different batches,
    // it shows how much of that is waiting for memory rather than work.
    const first = await app.services.lookup.lookupIpsPacked(verified.caller, batches[0]!);
    answer(first.value);
    const cached: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const cpu = process.cpuUsage();
      for (let k = 0; k < batches.length; k++) answer(first.value);
      cached.push(nsPerAddress(process.cpuUsage(cpu)));
    }
    const total = b.map((x) => x.lookups + x.write);
    return {
      settings: `${ROUNDS} alternating rounds x ${PER_ROUND.toLocaleString('en-US')} requests, one request per read, after ${WARM_UP.toLocaleString('en-US')} random ones`,
      'warm-up: random IPv4, first 200,000 (ns CPU/request)': Math.round(warmUp),
      'fixed 8.8.8.8 (ns CPU/request, median)': Math.round(mf),
      'random routed IPv4 (ns CPU/request, median)': Math.round(mr),
      'rounds fixed | random': `${f.map(Math.round).join(',')} | ${r.map(Math.round).join(',')}`,
      'random / fixed (cost of a fresh address)': Number((mr / mf).toFixed(2)),
      'answer bytes per request (random)': Math.round(socket.bytes / socket.answers),
      'batch of 1,000: ns CPU/address, no HTTP (median)': Math.round(median(total)),
      'batch rounds': total.map(Math.round).join(','),
      'batch: lookups (plan, charge, resolve) | answer written, ns/address (median)': `${Math.round(median(b.map((x) => x.lookups)))} | ${Math.round(median(b.map((x) => x.write)))}`,
      'batch: one batch answer written again and again (records in cache), ns/address (median)': Math.round(median(cached)),
      'batch answer bytes per address': Math.round(answerBytes / (batches.length * 1000)),
    };
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
