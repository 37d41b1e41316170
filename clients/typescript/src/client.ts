import { apiError, ConnectionError, problemOf, type RateLimit, rateLimitOf, UmbraError } from './errors.js';
import { type FeedId, type FeedRecord, FEEDS, type SnapshotMeta, type SnapshotPage, snapshotPath } from './feeds.js';
import { backoffDelay, type Clock, RETRYABLE_STATUS, type RetryOptions, type RetryPolicy, retryPolicy, systemClock } from './retry.js';
import { lookupMany, type LookupManyOptions, type LookupManyResult } from './batch.js';
import { type StreamOptions, streamRecords } from './stream.js';
import { type DownloadOptions, type DownloadResult, downloadSnapshot } from './download.js';
import type { AccountInfo, BatchResult, DomainResult, HealthStatus, IpResult } from './types.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';

export interface UmbraClientOptions {
  /** The team's API key; default: the `UMBRA_API_KEY` environment variable. */
  apiKey?: string;
  /** The service's origin, with or without `/api/v4` (default `http://127.0.0.1:8080`). */
  baseUrl?: string;
  /** The retry recipe (attempts 5 to 8, delays, jitter); `false` makes every call a single attempt. */
  retry?: RetryOptions | false;
  /** Time source and sleeper (default: the system's). */
  clock?: Clock;
  /** Random source in [0, 1) for the jitter (default `Math.random`). */
  random?: () => number;
  /** Called before each wait between attempts. */
  onRetry?: (info: RetryInfo) => void;
  /** Sent as `User-Agent` (default `umbra-client-ts/VERSION`). */
  userAgent?: string;
  /** Batches of a `lookupMany` in flight at once (default 4). */
  concurrency?: number;
}

export interface RetryInfo {
  /** The attempt that failed (1-based). */
  attempt: number;
  /** The wait before the next one, in ms. */
  delayMs: number;
  /** The status that failed, or undefined for a connection failure. */
  status: number | undefined;
  method: string;
  path: string;
}

/** A successful answer with the headers a caller may care about. */
export interface Answer<T> {
  body: T;
  status: number;
  headers: Headers;
  rateLimit: RateLimit | undefined;
  /** `X-Credits-Remaining` of a billed lookup. */
  creditsRemaining: number | undefined;
}

export interface RequestSpec {
  method: 'GET' | 'POST';
  /** Under `/api/v4`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: unknown;
  /**
   * A billed lookup: retried only where the server charged nothing (an error status, or a connection
   * that failed before the request was sent), never after a connection lost mid-answer.
   */
  billed?: boolean;
  signal?: AbortSignal;
  /** `manual` for downloads, whose 307 is followed by the caller without the key. */
  redirect?: 'manual';
  /** Return the response unread (streams, downloads). */
  raw?: boolean;
}

const VERSION = '0.1.0';

/** Connection failures where the request never reached the server, so retrying cannot charge twice. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function causeCode(e: unknown): string | undefined {
  let c: unknown = e;
  for (let i = 0; i < 4 && c && typeof c === 'object'; i++) {
    const code = (c as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    c = (c as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * The umbra API: every HTTP operation, typed, with the service's client recipe (retries with backoff,
 * batching, stream reconnects, verified downloads) built in.
 */
export class UmbraClient {
  readonly baseUrl: string;
  readonly apiBase: string;
  readonly retry: RetryPolicy;
  readonly clock: Clock;
  readonly random: () => number;
  readonly concurrency: number;
  readonly #apiKey: string;
  readonly #onRetry: ((info: RetryInfo) => void) | undefined;
  readonly #userAgent: string;

  constructor(options: UmbraClientOptions = {}) {
    const key = options.apiKey ?? process.env.UMBRA_API_KEY;
    if (!key) throw new UmbraError('no API key: pass apiKey or set UMBRA_API_KEY');
    this.#apiKey = key;
    const base = new URL(options.baseUrl ?? DEFAULT_BASE_URL);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new UmbraError(`baseUrl must be http(s), not ${base.protocol}`);
    const path = base.pathname.replace(/\/+$/, '').replace(/\/api\/v4$/, '');
    this.baseUrl = `${base.origin}${path}`;
    this.apiBase = `${this.baseUrl}/api/v4`;
    this.retry = retryPolicy(options.retry);
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.#onRetry = options.onRetry;
    this.#userAgent = options.userAgent ?? `umbra-client-ts/${VERSION}`;
    this.concurrency = options.concurrency ?? 4;
    if (!Number.isInteger(this.concurrency) || this.concurrency < 1) throw new RangeError('concurrency must be a positive integer');
  }

  /** `GET /health` (no key needed, never rate limited): `ok` or `unhealthy` with its problems. */
  async health(signal?: AbortSignal): Promise<HealthStatus> {
    const res = await fetch(`${this.apiBase}/health`, { signal, headers: { 'user-agent': this.#userAgent } });
    return (await res.json()) as HealthStatus;
  }

  /** The calling key's account, scopes and remaining credits (free). */
  async account(signal?: AbortSignal): Promise<AccountInfo> {
    return (await this.request<AccountInfo>({ method: 'GET', path: '/account/me', signal })).body;
  }

  /** One address (1 credit). `explain` adds the evidence behind each signal. */
  async lookupIp(ip: string, options: { explain?: boolean; signal?: AbortSignal } = {}): Promise<IpResult> {
    return (await this.lookupIpAnswer(ip, options)).body;
  }

  /** The same, with the answer's headers (`creditsRemaining`, `rateLimit`). */
  lookupIpAnswer(ip: string, options: { explain?: boolean; signal?: AbortSignal } = {}): Promise<Answer<IpResult>> {
    return this.request<IpResult>({
      method: 'GET',
      path: `/lookup/ip/${encodeURIComponent(ip)}`,
      query: { explain: options.explain || undefined },
      billed: true,
      signal: options.signal,
    });
  }

  /** One batch of up to 1,000 addresses (ceil(n x 0.9) credits, n the unique valid ones). */
  lookupIps(ips: readonly string[], signal?: AbortSignal): Promise<Answer<BatchResult>> {
    if (ips.length > 1000) throw new RangeError(`a batch holds at most 1,000 addresses (got ${ips.length}); use lookupMany`);
    return this.request<BatchResult>({ method: 'POST', path: '/lookup/ips', body: { ips }, billed: true, signal });
  }

  /** Any number of addresses, in batches of 1,000 run `concurrency` at a time; results in input order. */
  lookupMany(ips: Iterable<string>, options: LookupManyOptions = {}): Promise<LookupManyResult> {
    return lookupMany(this, ips, options);
  }

  /** Honeypot intelligence about a domain (1 credit); `limit` caps `recent_events` (1..1000). */
  async lookupDomain(domain: string, options: { limit?: number; signal?: AbortSignal } = {}): Promise<DomainResult> {
    const path = `/lookup/domain/${encodeURIComponent(domain)}`;
    return (
      await this.request<DomainResult>({ method: 'GET', path, query: { limit: options.limit }, billed: true, signal: options.signal })
    ).body;
  }

  /** One page of a feed's snapshots, newest first; pass `next_cursor` back as `cursor`. */
  async listSnapshots(feed: FeedId, options: { limit?: number; cursor?: string; signal?: AbortSignal } = {}): Promise<SnapshotPage> {
    const path = `/feeds/${FEEDS[feed].segment}/export`;
    return (
      await this.request<SnapshotPage>({
        method: 'GET',
        path,
        query: { limit: options.limit, cursor: options.cursor },
        signal: options.signal,
      })
    ).body;
  }

  /** Every snapshot of a feed, newest first, across pages. */
  async *snapshots(feed: FeedId, options: { pageSize?: number; signal?: AbortSignal } = {}): AsyncGenerator<SnapshotPage['feeds'][number]> {
    let cursor: string | undefined;
    do {
      const page = await this.listSnapshots(feed, { limit: options.pageSize, cursor, signal: options.signal });
      yield* page.feeds;
      cursor = page.next_cursor;
    } while (cursor !== undefined);
  }

  /** Metadata of a snapshot (`latest`, `YYYY-MM-DD` or `YYYY-MM-DD/H`): size, rows, SHA-256, schema. */
  async snapshotMeta(feed: FeedId, id: string, signal?: AbortSignal): Promise<SnapshotMeta> {
    return (await this.request<SnapshotMeta>({ method: 'GET', path: `${snapshotPath(feed, id)}/meta`, signal })).body;
  }

  /** The presigned URL a snapshot's download redirects to (valid 24 hours; it needs no key). */
  async snapshotUrl(feed: FeedId, id: string, signal?: AbortSignal): Promise<string> {
    const res = await this.request<Response>({ method: 'GET', path: snapshotPath(feed, id), redirect: 'manual', raw: true, signal });
    const location = res.headers.get('location');
    await res.body.body?.cancel();
    if (res.status !== 307 || !location) throw new UmbraError(`download of ${feed} ${id} answered ${res.status} without a redirect`);
    return new URL(location, this.baseUrl).toString();
  }

  /** Downloads a snapshot to `file`, verified against its metadata's size and SHA-256, resuming a partial one. */
  downloadSnapshot(feed: FeedId, id: string, file: string, options: DownloadOptions = {}): Promise<DownloadResult> {
    return downloadSnapshot(this, feed, id, file, options);
  }

  /** A feed's live records, reconnecting for ever (until `signal` aborts or the loop breaks). */
  stream<F extends FeedId>(feed: F, options: StreamOptions = {}): AsyncIterable<FeedRecord<F>> {
    return streamRecords(this, feed, options);
  }

  /** Waits before the next attempt, or says to stop: the recipe, shared by every operation. */
  async backoff(
    attempt: number,
    status: number | undefined,
    retryAfterS: number | undefined,
    what: { method: string; path: string },
    signal?: AbortSignal,
  ): Promise<boolean> {
    if (attempt >= this.retry.maxAttempts) return false;
    const delayMs = backoffDelay(this.retry, attempt, this.random, retryAfterS);
    this.#onRetry?.({ attempt, delayMs, status, method: what.method, path: what.path });
    await this.clock.sleep(delayMs, signal);
    return true;
  }

  /** Headers of a request to the service itself (never to a storage host). */
  headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'x-api-key': this.#apiKey, 'user-agent': this.#userAgent, ...extra };
  }

  get userAgent(): string {
    return this.#userAgent;
  }

  /** One operation with the retry recipe; non-2xx answers throw their typed error. */
  async request<T>(spec: RequestSpec): Promise<Answer<T>> {
    const url = new URL(`${this.apiBase}${spec.path}`);
    for (const [k, v] of Object.entries(spec.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const body = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers = this.headers(body === undefined ? {} : { 'content-type': 'application/json' });
    for (let attempt = 1; ; attempt++) {
      let res: Response;
      try {
        res = await fetch(url, { method: spec.method, headers, body, signal: spec.signal, redirect: spec.redirect ?? 'error' });
      } catch (e) {
        if (spec.signal?.aborted) throw spec.signal.reason;
        const code = causeCode(e);
        // A billed request whose connection broke after it was sent may have been charged: not resent.
        const safe = !spec.billed || (code !== undefined && NOT_SENT.has(code));
        if (safe && (await this.backoff(attempt, undefined, undefined, spec, spec.signal))) continue;
        throw new ConnectionError(`${spec.method} ${spec.path}: ${(e as Error).message}${code ? ` (${code})` : ''}`, e, attempt);
      }
      if (res.ok || (spec.redirect === 'manual' && res.status === 307)) {
        const answer = {
          status: res.status,
          headers: res.headers,
          rateLimit: rateLimitOf(res.headers),
          creditsRemaining: res.headers.has('x-credits-remaining') ? Number(res.headers.get('x-credits-remaining')) : undefined,
        };
        if (spec.raw) return { ...answer, body: res as T };
        let parsed: T;
        try {
          parsed = (await res.json()) as T;
        } catch (e) {
          if (spec.signal?.aborted) throw spec.signal.reason;
          throw new ConnectionError(`${spec.method} ${spec.path}: the answer could not be read: ${(e as Error).message}`, e, attempt);
        }
        return { ...answer, body: parsed };
      }
      const text = await res.text().catch(() => '');
      const err = apiError(res.status, problemOf(res.status, text, res.statusText), res.headers, attempt);
      if (RETRYABLE_STATUS.has(res.status) && (await this.backoff(attempt, res.status, err.retryAfter, spec, spec.signal))) continue;
      throw err;
    }
  }
}
