// How fast could a batch lookup be in JavaScript on this machine, whatever its design? The batch
// target (1 M addresses/s through HTTP, on a server with one core to itself) leaves 1 µs of server CPU
// per address for everything, of which bare node:http's transport of the answer takes 0.12-0.14.
// This bench measures the cheapest answer path we could think of against umbra's own, in process
// (no HTTP), on the same batches:
//
//   ceiling  the request body's bytes scanned for IPv4 addresses (no JSON.parse, no objects per
//            address), duplicates dropped in a typed hash table, each address's network and location
//            read from a /24 block index like umbra's, and the answer assembled from UTF-8 bytes made
//            in advance: every network and location record's JSON (with the member names around it)
//            and the intelligence of each network type, each address three Buffer copies and its own
//            text. Stages run over the whole batch in turn (index, then record offsets, then the
//            copies), so the memory misses of different addresses overlap. It does none of the rest:
//            no credit charge, no intelligence index lookups (lists, feeds, overlays), no network-list
//            overrides, no honest-location checks, no IPv6, no validation beyond what the sample needs.
//   umbra    JSON.parse of the same body, LookupService.lookupIps (plan, charge, resolve) and the
//            route's own batch serializer, as in the request-cost bench.
//
// Both over the same 100 batches of 1,000 IPv4 addresses (the C-client bench's generator), replayed
// round after round as the C-client bench replays its batches, after a warm-up round each. The sample
// keeps only addresses whose umbra answer is exactly the records' JSON (not anycast, not bogon, no
// intelligence beyond the network type's prior), and the bench checks that the ceiling's answer to
// every batch is byte-identical to umbra's before it measures: the two do the same job on this sample.
// It also reports the memory those prepared bytes take for every record of the packaged dataset.
// Environment: UMBRA_BENCH_ROUNDS (5).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type, type TSchema } from 'typebox';
import { buildApp } from '../src/app.ts';
import { parseConfig } from '../src/config.ts';
import { loadDataset, type DatasetRanges } from '../src/modules/dataset/dataset-reader.ts';
import { parseIp } from '../src/lib/ip-address.ts';
import { recordJson } from '../src/lib/record-json.ts';
import { priorOnly } from '../src/modules/intel/engine/intel-compose.ts';
import { batchSerializer, frozenPartsWriter, packedResultsWriter, type Serialize } from '../src/http/frozen-parts-json.ts';
import { BatchResult, IpResult } from '../src/http/schemas.ts';
import { ensureRealDataset } from '../test/helpers/test-dataset.ts';
import { BENCH_SEED, routedAddresses } from '../test/helpers/routed-addresses.ts';

const ROUNDS = Number(process.env.UMBRA_BENCH_ROUNDS ?? 5);
const BATCHES = 100;
const BATCH = 1000;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/** Bytes of a JSON piece made once: `text` as UTF-8. */
const bytes = (text: string) => Buffer.from(text, 'utf8');

/**
 * The ceiling's prepared bytes and its answer function. `intelligence(type)`: the intelligence JSON
 * umbra answers for an address of that network type with nothing else known about it.
 */
function buildCeiling(ranges: DatasetRanges, intelligence: (type: string) => string) {
  const { starts, pairs: segPairs } = ranges.v4;
  // Records by identity, so each record's bytes are made once however many pairs share it.
  const netIds = new Map<object, number>();
  const locIds = new Map<object, number>();
  const netParts: Buffer[] = [];
  const locParts: Buffer[] = [];
  const netTypeOf: number[] = [];
  const types: string[] = [];
  const pairNet = new Int32Array(ranges.pairCount).fill(-1);
  const pairLoc = new Int32Array(ranges.pairCount).fill(-1);
  for (let p = 0; p < ranges.pairCount; p++) {
    const net = ranges.network(p);
    const loc = ranges.location(p);
    if (net) {
      let id = netIds.get(net);
      if (id === undefined) {
        netIds.set(net, (id = netParts.length));
        netParts.push(bytes(`","network":${recordJson(net) ?? JSON.stringify(net)},"location":`));
        let t = types.indexOf(net.type);
        if (t < 0) t = types.push(net.type) - 1;
        netTypeOf.push(t);
      }
      pairNet[p] = id;
    }
    if (loc) {
      let id = locIds.get(loc);
      if (id === undefined) {
        locIds.set(loc, (id = locParts.length));
        locParts.push(bytes(`${recordJson(loc) ?? JSON.stringify(loc)},"intelligence":`));
      }
      pairLoc[p] = id;
    }
  }
  const arena = (parts: Buffer[]) => {
    const offsets = new Uint32Array(parts.length + 1);
    let at = 0;
    for (let i = 0; i < parts.length; i++) {
      offsets[i] = at;
      at += parts[i]!.length;
    }
    offsets[parts.length] = at;
    return { bytes: Buffer.concat(parts), offsets };
  };
  const nets = arena(netParts);
  const locs = arena(locParts);
  const intel = arena(types.map((t) => bytes(`${intelligence(t)}}`)));
  const netType = Int32Array.from(netTypeOf);
  // Block index as umbra's: per /24 the network and location when one segment covers the block,
  // else -2 and the first segment in it (then a short scan).
  const direct = new Int32Array(2 << 24).fill(-1);
  for (let i = 0; i < starts.length; i++) {
    const s = starts[i]!;
    const e = i + 1 < starts.length ? starts[i + 1]! - 1 : 0xffffffff;
    for (let b = s >>> 8; b <= e >>> 8; b++) {
      if (s <= b * 256 && e >= b * 256 + 255) {
        direct[2 * b] = pairNet[segPairs[i]!]!;
        direct[2 * b + 1] = pairLoc[segPairs[i]!]!;
      } else if (direct[2 * b] !== -2) {
        direct[2 * b] = -2;
        direct[2 * b + 1] = i;
      }
    }
  }

  const OPEN = bytes('{"results":[');
  const CLOSE = bytes('],"invalid":[]}');
  const IP = bytes('{"ip":"');
  const out = Buffer.allocUnsafe(BATCH * 1024);
  const ipAt = new Int32Array(BATCH);
  const ipEnd = new Int32Array(BATCH);
  const ipValue = new Int32Array(BATCH);
  const netOf = new Int32Array(BATCH);
  const locOf = new Int32Array(BATCH);
  const seenKey = new Int32Array(4096);
  const seenGen = new Int32Array(4096);
  let gen = 0;
  let sink = 0;

  /** Stage 1: the addresses of `{"ips":["a.b.c.d",...]}` as JSON.stringify writes it, duplicates dropped. */
  const scan = (body: Buffer): number => {
    gen++;
    const n = body.length;
    let i = body.indexOf(0x5b) + 1;
    let count = 0;
    while (i < n && body[i] === 0x22) {
      const from = ++i;
      let ip = 0;
      let part = 0;
      for (; i < n; i++) {
        const c = body[i]!;
        if (c >= 0x30 && c <= 0x39) part = part * 10 + c - 0x30;
        else if (c === 0x2e) {
          ip = ip * 256 + part;
          part = 0;
        } else break;
      }
      ip = (ip * 256 + part) | 0;
      const to = i;
      i += 2; // the closing quote and the comma (or the bracket)
      let h = Math.imul(ip, 0x9e3779b1) >>> 20;
      let dup = false;
      while (seenGen[h] === gen) {
        if (seenKey[h] === ip) {
          dup = true;
          break;
        }
        h = (h + 1) & 4095;
      }
      if (dup) continue;
      seenGen[h] = gen;
      seenKey[h] = ip;
      ipAt[count] = from;
      ipEnd[count] = to;
      ipValue[count] = ip;
      count++;
    }
    return count;
  };
  /** Stage 2: every address's block-index entry, then its records (split blocks scanned). */
  const look = (count: number): void => {
    for (let k = 0; k < count; k++) {
      const b = (ipValue[k]! >>> 8) * 2;
      netOf[k] = direct[b]!;
      locOf[k] = direct[b + 1]!;
    }
    for (let k = 0; k < count; k++) {
      if (netOf[k] !== -2) continue;
      const p = splitPair(locOf[k]!, ipValue[k]! >>> 0);
      netOf[k] = pairNet[p]!;
      locOf[k] = pairLoc[p]!;
    }
  };
  /** The pair of `ip` in a split block whose first segment is `i`: a short scan. */
  const splitPair = (i: number, ip: number): number => {
    while (i + 1 < starts.length && starts[i + 1]! <= ip) i++;
    return segPairs[i]!;
  };
  /** Stage 3: the first byte of every address's prepared bytes, so their misses overlap. */
  const touch = (count: number): void => {
    let x = 0;
    for (let k = 0; k < count; k++) x += nets.offsets[netOf[k]!]! + locs.offsets[locOf[k]!]! + netType[netOf[k]!]!;
    for (let k = 0; k < count; k++) x += nets.bytes[nets.offsets[netOf[k]!]!]! + locs.bytes[locs.offsets[locOf[k]!]!]!;
    sink += x;
  };
  /** Stage 4: the answer, three copies and the address's text per result. */
  const write = (body: Buffer, count: number): Buffer => {
    out.set(OPEN, 0);
    let at = OPEN.length;
    for (let k = 0; k < count; k++) {
      if (k > 0) out[at++] = 0x2c;
      for (let q = 0; q < IP.length; q++) out[at++] = IP[q]!;
      for (let q = ipAt[k]!; q < ipEnd[k]!; q++) out[at++] = body[q]!;
      const net = netOf[k]!;
      const loc = locOf[k]!;
      const t = netType[net]!;
      at += nets.bytes.copy(out, at, nets.offsets[net]!, nets.offsets[net + 1]!);
      at += locs.bytes.copy(out, at, locs.offsets[loc]!, locs.offsets[loc + 1]!);
      at += intel.bytes.copy(out, at, intel.offsets[t]!, intel.offsets[t + 1]!);
    }
    out.set(CLOSE, at);
    return out.subarray(0, at + CLOSE.length);
  };
  return {
    /** The answer to one body; valid until the next call (one output buffer, reused). */
    answer(body: Buffer): Buffer {
      const count = scan(body);
      look(count);
      touch(count);
      return write(body, count);
    },
    /** Whether every address of `ips` is in a network and a location range (the ceiling answers no other). */
    covers(ip: string): boolean {
      const p = parseIp(ip);
      if (p?.version !== 4) return false;
      const b = (p.v4 >>> 8) * 2;
      if (direct[b] !== -2) return direct[b]! >= 0 && direct[b + 1]! >= 0;
      const pair = splitPair(direct[b + 1]!, p.v4);
      return pairNet[pair]! >= 0 && pairLoc[pair]! >= 0;
    },
    preparedBytes: nets.bytes.length + locs.bytes.length + intel.bytes.length + 4 * (nets.offsets.length + locs.offsets.length),
    records: { networks: netParts.length, locations: locParts.length },
    get sink() {
      return sink;
    },
  };
}

export async function benchBatchCeiling(): Promise<Record<string, number | string>> {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-bench-ceiling-'));
  const config = parseConfig({ UMBRA_DATA_DIR: dir, UMBRA_LOG_LEVEL: 'warn', UMBRA_SIMULATOR_RATE: '0', UMBRA_EXPORT_JOBS: 'off' });
  const dataset = loadDataset(await ensureRealDataset());
  const app = await buildApp(config, { dataset, datasetRefreshMs: 3_600_000, fastPath: true });
  try {
    const org = await app.services.admin.createOrg({ name: 'bench', credits: 1e12 });
    const { secret } = await app.services.admin.createKey({ org: org.id, email: 'bench@umbra.local', scopes: ['BASIC'] });
    const verified = await app.services.accounts.verifyKey(secret);
    if (!verified.ok) throw new Error(`the bench key was refused: ${verified.reason}`);
    const caller = verified.caller;
    await app.http.listen({ port: 0, host: '127.0.0.1' });
    const compiler = app.http.serializerCompiler!;
    const compile = (schema: TSchema) => compiler({ schema, method: 'POST', url: '/lookup/ips', httpStatus: '200' }) as Serialize;
    const item = frozenPartsWriter(IpResult, compile, compile(Type.Ref('IpResult')));
    const umbraAnswer = batchSerializer(item, compile(BatchResult), packedResultsWriter(IpResult, item));
    /** What the route does: the packed lookups and the route's serializer. */
    const umbra = async (body: Buffer) => {
      const billed = await app.services.lookup.lookupIpsPacked(caller, (JSON.parse(body.toString('utf8')) as { ips: string[] }).ips);
      return umbraAnswer(billed.value) as Buffer;
    };
    /** The same with every result an object (lookupIps), as the route answered before packed results. */
    const umbraObjects = async (body: Buffer) => {
      const billed = await app.services.lookup.lookupIps(caller, (JSON.parse(body.toString('utf8')) as { ips: string[] }).ips);
      return umbraAnswer(billed.value) as Buffer;
    };

    // The intelligence umbra answers for an address nothing is known about but its network type.
    const ceiling = buildCeiling(dataset.ranges(), (type) => {
      const intel = priorOnly(type);
      return recordJson(intel) ?? JSON.stringify(intel);
    });

    // The sample: fresh routed IPv4 addresses whose umbra answer is what the ceiling writes.
    const candidates = routedAddresses('v4', BATCHES * BATCH * 1.3, BENCH_SEED).filter((ip) => ceiling.covers(ip));
    const kept: string[] = [];
    for (let i = 0; i < candidates.length && kept.length < BATCHES * BATCH; i += BATCH) {
      const ips = candidates.slice(i, i + BATCH);
      for (const ip of ips) {
        const body = Buffer.from(JSON.stringify({ ips: [ip] }));
        if ((await umbra(body)).equals(ceiling.answer(body))) kept.push(ip);
      }
    }
    if (kept.length < BATCHES * BATCH) throw new Error(`only ${kept.length} addresses answered alike by both paths`);
    const bodies = Array.from({ length: BATCHES }, (_, b) => Buffer.from(JSON.stringify({ ips: kept.slice(b * BATCH, (b + 1) * BATCH) })));
    for (const body of bodies) {
      const a = await umbra(body);
      if (!a.equals(ceiling.answer(body))) throw new Error('the ceiling and umbra answered a batch differently');
      if (!a.equals(await umbraObjects(body))) throw new Error('umbra answered a batch differently packed and as objects');
    }

    const nsPerAddress = (used: NodeJS.CpuUsage) => ((used.user + used.system) * 1000) / (BATCHES * BATCH);
    const umbraRound = async (answer = umbra) => {
      const cpu = process.cpuUsage();
      for (const body of bodies) await answer(body);
      return nsPerAddress(process.cpuUsage(cpu));
    };
    const ceilingRound = () => {
      const cpu = process.cpuUsage();
      for (const body of bodies) ceiling.answer(body);
      return nsPerAddress(process.cpuUsage(cpu));
    };
    await umbraRound();
    await umbraRound(umbraObjects);
    ceilingRound();
    const u: number[] = [];
    const o: number[] = [];
    const c: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      u.push(await umbraRound());
      o.push(await umbraRound(umbraObjects));
      c.push(ceilingRound());
    }
    const mu = median(u);
    const mo = median(o);
    const mc = median(c);
    return {
      settings: `${ROUNDS} alternating rounds over the same ${BATCHES} batches of ${BATCH} IPv4 addresses, in process, no HTTP`,
      'sample: addresses answered alike by both (of candidates tried)': `${kept.length.toLocaleString('en-US')}`,
      'umbra (packed results, as the route): ns CPU/address (median; rounds)': `${Math.round(mu)} (${u.map(Math.round).join(', ')})`,
      'umbra, every result an object: ns CPU/address (median; rounds)': `${Math.round(mo)} (${o.map(Math.round).join(', ')})`,
      'ceiling: ns CPU/address (median; rounds)': `${Math.round(mc)} (${c.map(Math.round).join(', ')})`,
      'ceiling / umbra CPU': Number((mc / mu).toFixed(2)),
      'ceiling: addresses/s of one core, HTTP free (1e9 / ns)': Math.round(1e9 / mc).toLocaleString('en-US'),
      'budget for 1 M addresses/s through HTTP, ns/address': '1,000 (bare node:http answering the batch: 120-140 of it)',
      'ceiling: prepared bytes for every record, MiB': `${(ceiling.preparedBytes / 2 ** 20).toFixed(1)} (${ceiling.records.networks.toLocaleString('en-US')} networks, ${ceiling.records.locations.toLocaleString('en-US')} locations)`,
      'ceiling: block index, MiB': 128,
      sink: ceiling.sink % 7,
    };
  } finally {
    await app.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
