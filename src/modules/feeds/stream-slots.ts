/**
 * The per-team concurrent-stream allowance. acquire() and release() are atomic per team, whichever
 * node of a cluster serves the stream.
 */
export interface StreamSlots {
  /** Takes a slot when the team has fewer than `max` open streams; returns false otherwise. */
  acquire(orgId: string, max: number): Promise<boolean>;
  /** Frees a slot taken by acquire(); called exactly once per successful acquire. */
  release(orgId: string): Promise<void>;
  /** Open streams of the team now. */
  count(orgId: string): Promise<number>;
}
