/** One slot of a team's concurrent-stream allowance, held by one open stream. */
export interface StreamLease {
  readonly id: string;
  readonly orgId: string;
}

/** How long a lease lives unless renewed, when the backend is not told otherwise (ms). */
export const DEFAULT_LEASE_TTL_MS = 30_000;

/**
 * The per-team concurrent-stream allowance, whichever node of a cluster serves the stream. A slot is a
 * lease that lapses `ttlMs` after it was taken or last renewed, so the slots of a node that crashed
 * (and never released them) come back by themselves; the node serving a stream renews its lease well
 * within the TTL (StreamService: every ttlMs / 3). acquire, renew and release are atomic per team.
 */
export interface StreamSlots {
  /** Lifetime of a lease from its acquire or last renew (ms); the stream's renewal cadence follows from it. */
  readonly ttlMs: number;
  /** Takes a slot when the team has fewer than `max` live leases; undefined otherwise. The lease expires `ttlMs` after acquire/renew unless renewed. */
  acquire(orgId: string, max: number): Promise<StreamLease | undefined>;
  /** Extends a live lease; false when it had already expired (its slot may have been taken by then). */
  renew(lease: StreamLease): Promise<boolean>;
  /** Frees the slot; idempotent. */
  release(lease: StreamLease): Promise<void>;
  /** Live (unexpired) leases of the team. */
  count(orgId: string): Promise<number>;
}
