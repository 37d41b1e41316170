/**
 * The client backoff recipe of the contract: 1 s, doubling per consecutive failure, capped at 60 s,
 * each delay scattered by ±25 % so that sensors cut off together do not return together.
 */
export const BACKOFF_BASE_MS = 1_000;
export const BACKOFF_CAP_MS = 60_000;
export const BACKOFF_JITTER = 0.25;
/**
 * After this many consecutive failures the recipe says a client gives up. A sensor cannot drop what
 * it captured, so it keeps its spool and keeps trying at the cap; past this count /health reports the
 * upload as failing instead.
 */
export const BACKOFF_GIVE_UP_ATTEMPTS = 8;

/**
 * The wait before attempt `failures + 1`, after `failures` (>= 1) consecutive failures.
 * `random` returns a number in [0, 1) (injected so tests pin the jitter).
 */
export function backoffDelayMs(failures: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(failures - 1, 30));
  const nominal = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** exponent);
  return Math.round(nominal * (1 - BACKOFF_JITTER + 2 * BACKOFF_JITTER * random()));
}
