import type { ObjectStore } from './object-store.ts';
import type { PublishIntent, Snapshot, SnapshotCatalog } from './snapshot-catalog.ts';
import type { Clock } from '../../lib/clock.ts';

/**
 * How long an intent whose upload has not (yet) landed is left alone: it may belong to a publish
 * still running in another process (the CLI export verbs run beside the server). No upload takes an
 * hour, so an older one was cut short; dropping it earlier or later changes nothing visible.
 */
export const INTENT_STALE_MS = 3_600_000;

export interface RecoveryDeps {
  store: ObjectStore;
  catalog: SnapshotCatalog;
  clock: Clock;
}

export interface RecoveryReport {
  /** Uploads that had finished: their rows are now recorded. */
  completed: Snapshot[];
  /** Uploads that never happened: intents dropped, the old row and bytes were never touched. */
  abandoned: Snapshot[];
  /** Intents left for later: the upload may still be running. */
  pending: number;
}

/**
 * Settles one intent by what the store holds: the bytes it names are stored → its row is recorded
 * (the other rows of the key go in the same step); otherwise the upload did not happen and the
 * intent is dropped when `abandon` says so. A put is atomic, so the key holds either the old bytes,
 * which the old row still describes, or the new ones.
 */
export async function settlePublish(
  deps: RecoveryDeps,
  intent: PublishIntent,
  abandon: boolean,
): Promise<'completed' | 'abandoned' | 'pending'> {
  const { key, checksum } = intent.snapshot;
  const head = await deps.store.head(key);
  if (head?.sha256 === checksum)
    return (await deps.catalog.completePublish(intent.snapshot, { onlyIfPending: true })) ? 'completed' : 'pending';
  if (!abandon) return 'pending';
  return (await deps.catalog.abandonPublish(key, checksum)) ? 'abandoned' : 'pending';
}

/**
 * Finishes what publishes killed by a crash left: run by the scheduler before each pass (so at
 * start) and by the CLI export verbs before a job. Intents younger than `staleAfterMs` whose bytes
 * are not stored are left alone: their publish may still be running elsewhere.
 */
export async function recoverPublishes(deps: RecoveryDeps, staleAfterMs = INTENT_STALE_MS): Promise<RecoveryReport> {
  const report: RecoveryReport = { completed: [], abandoned: [], pending: 0 };
  const now = deps.clock.now();
  for (const intent of await deps.catalog.publishIntents()) {
    const outcome = await settlePublish(deps, intent, now - intent.startedAtMs >= staleAfterMs);
    if (outcome === 'pending') report.pending++;
    else report[outcome].push(intent.snapshot);
  }
  return report;
}
