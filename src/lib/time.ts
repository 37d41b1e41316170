/** Time constants and UTC calendar helpers, in milliseconds since the Unix epoch. */
export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** Start of the UTC hour holding `ms`. */
export const hourOf = (ms: number): number => Math.floor(ms / HOUR_MS) * HOUR_MS;
/** `YYYY-MM-DD` of a time, UTC. */
export const utcDate = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
/** Start (ms) of a UTC date `YYYY-MM-DD`. */
export const dayStartMs = (date: string): number => Date.parse(`${date}T00:00:00Z`);
export const utcHour = (ms: number): number => new Date(ms).getUTCHours();
