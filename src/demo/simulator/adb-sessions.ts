import { createHash } from 'node:crypto';
import { ADB_SCRIPTS } from './adb-scripts.ts';
import { chance, hex, pick, weighted } from './random.ts';
import { payloadHost, sourceAddress } from './sources.ts';
import type { SimulatorDeps } from './types.ts';

interface Session {
  id: string;
  sourceIp: string;
  commands: string[];
  /** Commands already emitted; sequential_id of the next one is next + 1. */
  next: number;
}

/** Attackers overlap: a few sessions run at once and their commands interleave in the feed. */
const MAX_ACTIVE = 4;
const NEW_SESSION_CHANCE = 0.3;

const scriptWeights = ADB_SCRIPTS.map((s) => [s, s.weight] as const);

/** Stateful: each call continues one of the open sessions or starts another. */
export function createAdbGenerator(deps: SimulatorDeps) {
  const active: Session[] = [];
  return (tsMs: number) => {
    const { rng } = deps;
    let s: Session;
    if (active.length === 0 || (active.length < MAX_ACTIVE && chance(rng, NEW_SESSION_CHANCE))) {
      const script = weighted(rng, scriptWeights);
      // Infected phones and TV boxes spread the worm; VPS operators run the miner campaigns.
      s = {
        id: hex(rng, 16),
        sourceIp: sourceAddress(rng, chance(rng, 0.6) ? 'iot' : 'abuse'),
        commands: script.commands(rng, payloadHost(rng)),
        next: 0,
      };
      active.push(s);
    } else {
      s = pick(rng, active);
    }
    const raw = Buffer.from(s.commands[s.next]!, 'utf8');
    s.next++;
    if (s.next >= s.commands.length) active.splice(active.indexOf(s), 1);
    return {
      session: s.id,
      sequential_id: s.next,
      command: raw.toString('base64'),
      hash: createHash('sha256').update(raw).digest('hex'),
      timestamp: Math.floor(tsMs),
      source_ip: s.sourceIp,
    };
  };
}
