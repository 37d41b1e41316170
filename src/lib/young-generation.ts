/**
 * The size of V8's young generation that `umbra serve` is meant to run with.
 *
 * Why: a batch answer or a gRPC call leaves many objects that live a little while (a batch's parsed
 * addresses and results, node's HTTP/2 stream state), beside a large old generation (the decoded
 * dataset records and their JSON). With V8's default semi-spaces (16 MiB on Node 20) scavenges come
 * often, copy what is still alive each time and promote much of it; twice the room lets most of it die
 * first, so batches and gRPC calls cost markedly less CPU, for a few tens of MiB of memory (figures in
 * docs/operations.md, "Run node with 32 MiB semi-spaces").
 *
 * V8 sizes the heap when the process starts, so the flag must be on node's command line or in
 * NODE_OPTIONS: `npm start` passes it; `umbra serve` says so when it was started without it.
 */
export const SEMI_SPACE_MIB = 32;

/** The node flag, as `npm start` and the benches pass it. */
export const SEMI_SPACE_FLAG = `--max-semi-space-size=${SEMI_SPACE_MIB}`;

/**
 * The semi-space size (MiB) node was started with, from its command line or NODE_OPTIONS (the last
 * one given wins, as in node), or undefined when neither sets it (V8's default).
 */
export function semiSpaceMiB(execArgv: readonly string[], nodeOptions: string | undefined): number | undefined {
  let found: number | undefined;
  const scan = (args: readonly string[]) => {
    for (let i = 0; i < args.length; i++) {
      const a = args[i]!;
      // V8 accepts both spellings, and the value as the next argument.
      const m = /^--max[-_]semi[-_]space[-_]size(?:=(.*))?$/.exec(a);
      if (!m) continue;
      const value = Number(m[1] ?? args[++i]);
      if (Number.isFinite(value)) found = value;
    }
  };
  // NODE_OPTIONS is applied before the command line's own flags, which win.
  scan((nodeOptions ?? '').split(/\s+/).filter(Boolean));
  scan(execArgv);
  return found;
}

/** A line for the operator when node runs with a smaller young generation than umbra is tuned for; undefined when fine. */
export function youngGenerationAdvice(execArgv: readonly string[], nodeOptions: string | undefined): string | undefined {
  const mib = semiSpaceMiB(execArgv, nodeOptions);
  if (mib !== undefined && mib >= SEMI_SPACE_MIB) return undefined;
  return (
    `note: node runs with ${mib === undefined ? "V8's default" : `${mib} MiB`} semi-spaces; batch lookups and gRPC calls ` +
    `cost a quarter to a half less CPU with ${SEMI_SPACE_FLAG} (npm start passes it; otherwise start umbra with ` +
    `'node ${SEMI_SPACE_FLAG} bin/umbra.js serve' or set NODE_OPTIONS=${SEMI_SPACE_FLAG})`
  );
}
