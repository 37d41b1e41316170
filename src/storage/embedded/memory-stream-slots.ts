import type { StreamSlots } from '../../modules/feeds/stream-slots.ts';

/** One process holds every stream in embedded mode, so a counter per team is the whole truth. */
export class MemoryStreamSlots implements StreamSlots {
  private readonly open = new Map<string, number>();

  async acquire(orgId: string, max: number): Promise<boolean> {
    const n = this.open.get(orgId) ?? 0;
    if (n >= max) return false;
    this.open.set(orgId, n + 1);
    return true;
  }

  async release(orgId: string): Promise<void> {
    const n = (this.open.get(orgId) ?? 0) - 1;
    if (n > 0) this.open.set(orgId, n);
    else this.open.delete(orgId);
  }

  async count(orgId: string): Promise<number> {
    return this.open.get(orgId) ?? 0;
  }
}
