/** The middle value of a bench's rounds (the upper middle for an even count). */
export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * The figures every sensor listener bench opens with: the bare baseline's and the listener's median
 * rates, their ratio against the target, and every round of both, in `unit`.
 */
export function listenerRates(
  labels: { bare: string; sensor: string },
  unit: string,
  bare: number[],
  sensor: number[],
): Record<string, number | string> {
  const b = median(bare);
  const s = median(sensor);
  return {
    [labels.bare]: Math.round(b),
    [labels.sensor]: Math.round(s),
    'ratio sensor / bare (target >= 0.5)': (s / b).toFixed(2),
    [`rounds (bare | sensor ${unit})`]: `${bare.map(Math.round).join(',')} | ${sensor.map(Math.round).join(',')}`,
  };
}
