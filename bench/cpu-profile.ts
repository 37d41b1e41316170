// Where a node's CPU went, from a V8 CPU profile (UMBRA_BENCH_CPU_PROF=<dir> npm run bench -- distributed):
//   node --import tsx bench/cpu-profile.ts <file.cpuprofile> [<label>=<regex> ...]
// prints the busy time (samples that are not idle) and, for each label, the share of it whose stack
// holds a frame (function name and URL) matching the regex: time spent in that code and in everything
// it called. Without labels: the Redis path, PostgreSQL, the HTTP fast path and the garbage collector.
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const DEFAULTS = [
  'redis=ioredis|redis-rate-limiter|prefetch-rate-limiter',
  'postgresql=node_modules/(pg|pg-pool|pg-protocol)/|pg-credit|pg-pool\\.ts',
  'fast path=http/fast-route',
  'gc=\\(garbage collector\\)',
];

const [file, ...args] = process.argv.slice(2);
if (!file) throw new Error('usage: node --import tsx bench/cpu-profile.ts <file.cpuprofile> [<label>=<regex> ...]');
const labels = (args.length > 0 ? args : DEFAULTS).map((a) => {
  const i = a.indexOf('=');
  return { label: a.slice(0, i), re: new RegExp(a.slice(i + 1)) };
});

const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
// Per node: which labels match it or any frame above it.
const memo = new Map<number, boolean[]>();
const matches = (id: number): boolean[] => {
  const known = memo.get(id);
  if (known) return known;
  const n = byId.get(id)!;
  const text = `${n.callFrame.functionName} ${n.callFrame.url}`;
  const up = parent.get(id);
  const above = up === undefined ? undefined : matches(up);
  const r = labels.map((l, i) => l.re.test(text) || (above?.[i] ?? false));
  memo.set(id, r);
  return r;
};

let busy = 0;
const hits = labels.map(() => 0);
for (let i = 0; i < profile.samples.length; i++) {
  const id = profile.samples[i]!;
  if (byId.get(id)!.callFrame.functionName === '(idle)') continue;
  const dt = profile.timeDeltas[i] ?? 0;
  busy += dt;
  matches(id).forEach((m, j) => {
    if (m) hits[j]! += dt;
  });
}
console.log(`busy ${(busy / 1e6).toFixed(1)} s`);
for (const [j, l] of labels.entries())
  console.log(`  ${l.label.padEnd(12)} ${(hits[j]! / 1e3).toFixed(0).padStart(7)} ms  ${((100 * hits[j]!) / busy).toFixed(1)} %`);
