/**
 * Export jobs of one process run one at a time, scheduled or asked for by an operator: a rollup and
 * the next day's hour 00 share a storage key, and two publishes of one key must never interleave.
 */
export class JobLane {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(job: () => Promise<T>): Promise<T> {
    const result = this.tail.then(job);
    // The lane moves on whether the job succeeded or not; the caller sees its outcome.
    this.tail = result.catch(() => {});
    return result;
  }
}
