const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };

/** Parses `30d`, `12h`, `90m`, `3600s`, `2w` or a bare number of seconds into whole seconds; undefined if invalid. */
export function parseDuration(text: string): number | undefined {
  const m = /^(\d+)([smhdw]?)$/.exec(text.trim());
  if (!m) return undefined;
  const seconds = Number(m[1]) * UNITS[m[2] || 's']!;
  return Number.isSafeInteger(seconds) && seconds > 0 ? seconds : undefined;
}
