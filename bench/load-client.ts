// The swap bench's load generator, in a process of its own: the bench runner's own work (writing the
// rebuilt 150 MB file, its garbage collections and their helper threads) would otherwise stall the
// client and show as server latency. Run with --single-threaded-gc so its own collections take no
// second core from the server. It also reports each new X-Data-Version it is answered with, so the
// runner needs no polling requests of its own to see a swap. Protocol (IPC, advanced serialization):
//   parent → { port, key, ips, connections, ratePerSec, warmMs }   (closed-loop warm-up, then paced)
//   child  → { started: true }                                      (the paced load is running)
//   child  → { version, at }                                        (first answer of each data version)
//   parent → { stop: true }
//   child  → { at: Float64Array, ms: Float64Array, status: Float64Array }   (at: epoch ms, performance.timeOrigin based)
import { lookupLoad } from '../test/helpers/lookup-load.ts';

export interface LoadClientStart {
  port: number;
  key: string;
  ips: string[];
  connections: number;
  ratePerSec: number;
  warmMs: number;
}

export interface LoadClientSamples {
  at: Float64Array;
  ms: Float64Array;
  status: Float64Array;
}

export interface LoadClientVersion {
  version: string;
  at: number;
}

const CAPACITY = 2_000_000;

process.once('message', async (start: LoadClientStart) => {
  const warm = lookupLoad(start.port, start.key, start.ips, start.connections, undefined, () => {});
  await new Promise((r) => setTimeout(r, start.warmMs));
  await warm.stop();
  const samples: LoadClientSamples = { at: new Float64Array(CAPACITY), ms: new Float64Array(CAPACITY), status: new Float64Array(CAPACITY) };
  let n = 0;
  const origin = performance.timeOrigin;
  let version: string | undefined;
  const load = lookupLoad(start.port, start.key, start.ips, start.connections, start.ratePerSec, (at, ms, status, v) => {
    if (v !== undefined && v !== version) {
      version = v;
      process.send!({ version: v, at: origin + at } satisfies LoadClientVersion);
    }
    if (n === CAPACITY) return;
    samples.at[n] = origin + at;
    samples.ms[n] = ms;
    samples.status[n++] = status;
  });
  process.send!({ started: true });
  process.once('message', async () => {
    await load.stop();
    process.send!(
      { at: samples.at.slice(0, n), ms: samples.ms.slice(0, n), status: samples.status.slice(0, n) } satisfies LoadClientSamples,
      () => process.disconnect(),
    );
  });
});
