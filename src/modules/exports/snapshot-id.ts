import { AppError } from '../../errors.ts';

/** A snapshot as a request names it: `latest`, `YYYY-MM-DD`, and an optional hour (padded or not). */
export interface SnapshotRef {
  /** `YYYY-MM-DD`, or 'latest'. */
  date: string;
  hour?: number;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Validates the date and hour path segments into a SnapshotRef, or throws a 400 validation problem. */
export function parseSnapshotRef(date: string, hour?: string): SnapshotRef {
  const errors: Record<string, string[]> = {};
  if (date !== 'latest') {
    const m = DATE.exec(date);
    const ms = m === null ? Number.NaN : Date.parse(`${date}T00:00:00Z`);
    // Date.parse accepts 2026-02-31 (as March 3): a real calendar date must print back as itself.
    const valid = !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === date;
    if (!valid) errors.date = ["must be a UTC date 'YYYY-MM-DD' or the literal 'latest'"];
  }
  let h: number | undefined;
  if (hour !== undefined) {
    if (!/^\d{1,2}$/.test(hour) || Number(hour) > 23) errors.hour = ['must be an hour from 0 to 23 (padded or not)'];
    else h = Number(hour);
  }
  if (Object.keys(errors).length > 0) throw AppError.validation(errors);
  return h === undefined ? { date } : { date, hour: h };
}

/** The snapshot id as lists show it: `YYYY-MM-DD` or `YYYY-MM-DD/H`. */
export const snapshotId = (date: string, hour: number | null): string => (hour === null ? date : `${date}/${hour}`);
