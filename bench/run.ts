// `npm run bench`: every benchmark, each reported against a baseline measured in the same run.
import { benchCClients } from './c-clients.bench.ts';
import { benchHttpLookup } from './http-lookup.bench.ts';
import { benchGrpc } from './grpc.bench.ts';
import { benchIntelIndex } from './intel-index.bench.ts';
import { benchIntelEngine } from './intel-engine.bench.ts';
import { benchIntelMmdb } from './intel-mmdb.bench.ts';
import { benchFanOut, benchIngestion } from './feeds.bench.ts';
import { benchExports } from './exports.bench.ts';
import { benchDatasetSwap } from './dataset-swap.bench.ts';
import { benchDistributed } from './distributed.bench.ts';
import { benchDataQuality } from './data-quality.bench.ts';
import { benchClient } from './client.bench.ts';
import { benchSensor, benchSensorAdb, benchSensorTls } from './sensor.bench.ts';
import { benchSensorDns } from './sensor-dns.bench.ts';
import { benchRequestCost } from './request-cost.bench.ts';
import { benchBatchCeiling } from './batch-ceiling.bench.ts';

const only = process.argv[2];
const suites: Record<string, () => Promise<Record<string, number | string>>> = {
  'intel index (in-process, one core)': benchIntelIndex,
  'intelligence engine (in-process, one core)': benchIntelEngine,
  'intel index vs MMDB reader (in-process, one core)': benchIntelMmdb,
  // The lookup ratios the README reports: wrk and h2load, each in a process of its own.
  'C clients: HTTP and gRPC lookups (127.0.0.1)': benchCClients,
  // umbra's own CPU per lookup request, fresh addresses against a fixed one, without sockets or a client.
  'request cost: GET /lookup/ip in-process, random vs fixed address, and the batch without HTTP': benchRequestCost,
  // The cheapest batch answer path we could write in JavaScript against umbra's, same batches, same bytes.
  'batch ceiling: bytes prepared in advance vs umbra, in process': benchBatchCeiling,
  // The same lookups driven by JavaScript clients, which saturate before the baselines do: extra figures.
  'JS clients: HTTP lookups, autocannon (127.0.0.1)': () => benchHttpLookup(),
  'dataset swap under lookup load (127.0.0.1)': () => benchDatasetSwap(),
  'JS clients: gRPC mirror, lookups and streams vs HTTP (127.0.0.1)': () => benchGrpc(),
  'feed ingestion into the durable log (in-process)': benchIngestion,
  'feed stream fan-out (127.0.0.1)': () => benchFanOut(),
  'parquet exports (in-process)': benchExports,
  'distributed mode (127.0.0.1)': benchDistributed,
  'data-quality (answers against public ground truth)': benchDataQuality,
  '@umbra/client SDK: batching and a stream consumer (127.0.0.1)': benchClient,
  'sensor HTTP listener: captured and uploaded vs bare node:http (127.0.0.1)': () => benchSensor(),
  'sensor TLS listener: new handshakes captured and uploaded vs bare node:tls (127.0.0.1)': () => benchSensorTls(),
  'sensor ADB listener: sessions recorded and uploaded vs a bare TCP server (127.0.0.1)': () => benchSensorAdb(),
  // `npm run bench -- sensor-dns` runs this one alone; `-- sensor` all the sensor suites.
  'sensor-dns: DNS listener over UDP, captured and uploaded vs a bare UDP server, dnsperf (127.0.0.1)': () => benchSensorDns(),
};

for (const [name, run] of Object.entries(suites)) {
  if (only && !name.toLowerCase().includes(only.toLowerCase())) continue;
  const started = Date.now();
  const figures = await run();
  console.log(`\n## ${name} (${((Date.now() - started) / 1000).toFixed(0)} s)`);
  for (const [k, v] of Object.entries(figures)) console.log(`  ${k.padEnd(52)} ${v}`);
}
