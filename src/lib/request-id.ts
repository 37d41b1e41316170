import { randomUUID } from 'node:crypto';

// UUID-shaped request ids without per-request randomness: a random per-process prefix (the first 80
// bits of a v4 UUID) and a 48-bit counter. Unique within the process, and across processes with
// overwhelming probability; only uniqueness is needed, ids are not secrets.
const prefix = randomUUID().slice(0, 24);
let counter = 0;

/** A new request id such as `3f9a0c1e-7b2d-4c5e-9a1b-00000000002a`. */
export function nextRequestId(): string {
  counter = (counter + 1) % 0x1000000000000;
  return prefix + counter.toString(16).padStart(12, '0');
}

// What a caller may send as its own request id; anything else is replaced, never echoed.
const GIVEN_ID = /^[\w.:-]{1,128}$/;

/** The request id of a request: the caller's X-Request-Id when well-formed, else a new one. */
export function requestIdFrom(given: string | string[] | undefined): string {
  return typeof given === 'string' && GIVEN_ID.test(given) ? given : nextRequestId();
}
