/** A part of the running service that starts once the app is wired and stops before it ends. */
export interface Lifecycle {
  /** For logs and errors: what failed to start. */
  readonly name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** What keeps the part from doing its work right now (shown by /health); empty or absent when all is well. */
  problems?(): string[];
}

/**
 * Starts parts in the order given and stops them in reverse, so a part can rely on those started
 * before it. A part that fails to start stops the ones already started, then the error goes on.
 */
export class Lifecycles {
  private readonly started: Lifecycle[] = [];

  constructor(private readonly parts: readonly Lifecycle[]) {}

  async start(): Promise<void> {
    for (const part of this.parts) {
      try {
        await part.start();
      } catch (e) {
        await this.stop();
        throw e;
      }
      this.started.push(part);
    }
  }

  /** The problems of every started part. */
  problems(): string[] {
    return this.started.flatMap((p) => p.problems?.() ?? []);
  }

  async stop(): Promise<void> {
    for (let part = this.started.pop(); part; part = this.started.pop()) await part.stop();
  }
}
