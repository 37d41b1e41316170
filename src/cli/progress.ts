import cliProgress from 'cli-progress';

export interface ProgressEvent {
  phase: string;
  done: number;
  total: number;
}

/**
 * A progress bar on stderr for long work. On a terminal it redraws in place; elsewhere (CI, logs)
 * it prints one line per phase at each quarter, so logs stay short.
 */
export function createProgress(enabled: boolean): { update(e: ProgressEvent): void; stop(): void } {
  if (!enabled) return { update: () => {}, stop: () => {} };
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      { format: '{phase} [{bar}] {percentage}% | {value}/{total}', stream: process.stderr, hideCursor: true },
      cliProgress.Presets.shades_classic,
    );
    let phase = '';
    return {
      update: (e) => {
        if (e.phase !== phase) {
          if (phase) bar.stop();
          phase = e.phase;
          bar.start(Math.max(1, e.total), e.done, { phase: e.phase.padEnd(22) });
        } else bar.update(e.done, { phase: e.phase.padEnd(22) });
      },
      stop: () => {
        if (phase) bar.stop();
      },
    };
  }
  let phase = '';
  let quarter = -1;
  return {
    update: (e) => {
      if (e.phase !== phase) {
        phase = e.phase;
        quarter = -1;
      }
      const q = e.total > 0 ? Math.floor((4 * e.done) / e.total) : 0;
      if (q > quarter) {
        quarter = q;
        process.stderr.write(`${e.phase}: ${q * 25}% (${e.done}/${e.total})\n`);
      }
    },
    stop: () => {},
  };
}
