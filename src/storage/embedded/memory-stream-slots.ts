import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../../lib/clock.ts';
import { DEFAULT_LEASE_TTL_MS, type StreamLease, type StreamSlots } from '../../modules/feeds/stream-slots.ts';

export interface MemoryStreamSlotsOptions {
  /** Lease lifetime without renewal (ms); 30 s by default. */
  ttlMs?: number;
  clock?: Clock;
}

/**
 * One process holds every stream in embedded mode, so the leases of each team in a Map are the whole
 * truth. They expire like the distributed backend's (one contract): a stream whose renewals stopped
 * (a stalled event loop, a bug that forgot to release) gives its slot back after the TTL.
 */
export class MemoryStreamSlots implements StreamSlots {
  readonly ttlMs: number;
  private readonly clock: Clock;
  /** orgId → lease id → expiry (ms). A team without live leases has no entry, so memory follows active teams. */
  private readonly leases = new Map<string, Map<string, number>>();

  constructor(options: MemoryStreamSlotsOptions = {}) {
    this.ttlMs = options.ttlMs ?? DEFAULT_LEASE_TTL_MS;
    this.clock = options.clock ?? systemClock;
  }

  async acquire(orgId: string, max: number): Promise<StreamLease | undefined> {
    const now = this.clock.now();
    const team = this.live(orgId, now);
    if ((team?.size ?? 0) >= max) return undefined;
    const lease = { id: randomUUID(), orgId };
    (team ?? this.leases.set(orgId, new Map()).get(orgId)!).set(lease.id, now + this.ttlMs);
    return lease;
  }

  async renew(lease: StreamLease): Promise<boolean> {
    const now = this.clock.now();
    const team = this.live(lease.orgId, now);
    if (!team?.has(lease.id)) return false;
    team.set(lease.id, now + this.ttlMs);
    return true;
  }

  async release(lease: StreamLease): Promise<void> {
    const team = this.leases.get(lease.orgId);
    if (!team) return;
    team.delete(lease.id);
    if (team.size === 0) this.leases.delete(lease.orgId);
  }

  async count(orgId: string): Promise<number> {
    return this.live(orgId, this.clock.now())?.size ?? 0;
  }

  /** The team's leases with the expired ones dropped; undefined when none is left. */
  private live(orgId: string, now: number): Map<string, number> | undefined {
    const team = this.leases.get(orgId);
    if (!team) return undefined;
    for (const [id, expiresAt] of team) if (expiresAt <= now) team.delete(id);
    if (team.size > 0) return team;
    this.leases.delete(orgId);
    return undefined;
  }
}
