import { createHash } from 'node:crypto';
import { AppError } from '../../errors.ts';
import type { FeedId } from './feed-catalog.ts';
import type { IngestSummary } from './ingest-summary.ts';

/**
 * What is stored of an ingest made under an idempotency key: how far its input was stored, the answer
 * so far and, once it finished, the digest of its records. A resend under the key stores only what is
 * not stored yet, or nothing and the first answer again.
 */
export interface IngestKeyState {
  feed: FeedId;
  /** Every valid record up to this 1-based input record is stored; none after it by this key. */
  storedThrough: number;
  /** The answer as of storedThrough (accepted counts only stored records). */
  summary: IngestSummary;
  /** Set once an ingest under the key read its whole input: SHA-256 (hex) of the records it read. */
  recordsSha256?: string;
}

export type IngestKeyClaim =
  /** The caller holds the key until release() or finish(); `prior` is what earlier attempts stored. */
  | { kind: 'claimed'; prior?: IngestKeyState }
  /** An ingest under the key finished: answer it again, store nothing. */
  | { kind: 'finished'; state: IngestKeyState }
  /** Another ingest under the key is running (its lease ends at leaseUntilMs). */
  | { kind: 'busy'; leaseUntilMs: number }
  /** The key was used for another feed. */
  | { kind: 'other_feed'; feed: FeedId };

/**
 * Idempotency keys of ingestion, shared by every process that ingests (the server, `umbra ingest
 * --local`, every node). A claim is a lease: a process that dies holding it frees the key when the
 * lease ends; the live holder renews it with each progress().
 */
export interface IngestKeyStore {
  claim(key: string, feed: FeedId, owner: string, nowMs: number, leaseMs: number): Promise<IngestKeyClaim>;
  /** Records progress and renews the lease; throws when the claim was lost (another owner took the key). */
  progress(key: string, owner: string, state: IngestKeyState, nowMs: number, leaseMs: number): Promise<void>;
  /** The ingest read its whole input: later claims get `finished` until the key is purged. */
  finish(key: string, owner: string, state: IngestKeyState, nowMs: number): Promise<void>;
  /** The ingest stopped early (a storage fault): the key is free for a resend at once, progress kept. */
  release(key: string, owner: string): Promise<void>;
  /** Forgets keys not used since beforeMs; returns how many. */
  purge(beforeMs: number): Promise<number>;
}

/** A holder's claim ran out and another ingest took the key over (this one was too slow to renew it). */
export class IngestKeyLost extends AppError {
  constructor(key: string) {
    super(
      'IDEMPOTENCY_KEY_BUSY',
      `Another ingest took over this Idempotency-Key (${JSON.stringify(key.slice(0, 64))}) after this one's claim ran out.`,
    );
  }
}

/** How long a key is remembered after its last use: a day, the longest a resend is expected to lag. */
export const INGEST_KEY_RETENTION_MS = 24 * 3_600_000;
/** A claim not renewed for this long belongs to a dead process and may be taken over. */
export const INGEST_KEY_LEASE_MS = 30_000;

const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** The Idempotency-Key rule: 1 to 255 visible ASCII characters (no spaces), as in the IETF draft's examples. */
export function checkIngestKey(key: string): string | undefined {
  return KEY_RE.test(key) ? undefined : 'must be 1 to 255 visible ASCII characters (letters, digits, punctuation; no spaces)';
}

/**
 * The id under which record `n` of the input of `key` is stored, where the log can drop a record it
 * already has under the same id (JetStream's duplicate window): an append whose acknowledgement was
 * lost and that the client resends is then stored once, even before the key's progress was recorded.
 */
export function ingestRecordId(feed: FeedId, key: string, n: number): string {
  return `${createHash('sha256').update(feed).update('\0').update(key).digest('base64url').slice(0, 22)}.${n}`;
}
