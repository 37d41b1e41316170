import type { Lifecycle } from '../lib/lifecycle.ts';
import type { Simulator, SimulatorLogger } from './simulator/simulator.ts';

/**
 * Demo mode's traffic: on a first start (an empty feed log) the last 48 hours are backfilled, so
 * snapshots, domain time series and intelligence exist from the first minute; then the simulator runs.
 */
export class DemoTraffic implements Lifecycle {
  readonly name = 'demo simulator';

  constructor(
    readonly simulator: Simulator,
    private readonly logIsEmpty: () => Promise<boolean>,
    private readonly now: () => number,
    private readonly logger: SimulatorLogger & { info(obj: object, msg: string): void },
  ) {}

  async start(): Promise<void> {
    if (await this.logIsEmpty())
      this.logger.info({ records: await this.simulator.backfill(this.now()) }, 'simulator backfilled the last 48 hours');
    this.simulator.start();
  }

  stop(): Promise<void> {
    return this.simulator.stop();
  }
}
