/**
 * The size of V8's young generation that `umbra serve` is meant to run with.
 *
 * Why: umbra's heap holds the decoded dataset records and their JSON, so every scavenge of the young
 * generation has a large old generation to scan for pointers into it, and a batch answer or a gRPC
 * call leaves many short-lived objects. With V8's default semi-spaces (16 MiB on Node 20) scavenges
 * come often enough to take a quarter of a gRPC call's CPU; with 32 MiB the batch costs 1.3 to 2 times
 * less CPU per address and a gRPC call about a quarter less (docs/performance.md, 2026-11-29), at up
 * to 32 MiB more memory under load. Servers without umbra's heap (the benches' bare baselines) do not
 * change with it.
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
    `cost up to a half less CPU with ${SEMI_SPACE_FLAG} (npm start passes it; otherwise start umbra with ` +
    `'node ${SEMI_SPACE_FLAG} bin/umbra.js serve' or set NODE_OPTIONS=${SEMI_SPACE_FLAG})`
  );
}
