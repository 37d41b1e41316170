import type { UmbraClient } from './client.js';
import { apiError, ConnectionError, problemOf, UmbraApiError } from './errors.js';
import { type FeedId, type FeedRecord, FEEDS } from './feeds.js';
import { backoffDelay, RETRYABLE_STATUS } from './retry.js';

export interface StreamOptions {
  /** Ends the iteration (quietly) when it aborts. */
  signal?: AbortSignal;
  /**
   * The unit of each record's `timestamp`: `ms` (default) converts every feed to Unix milliseconds
   * (the proxies, anonymizers, torrents and ja4t streams send seconds, the honeypot streams
   * milliseconds), `s` to Unix seconds, `native` leaves the feed's own unit.
   */
  timestamps?: 'ms' | 's' | 'native';
  /** Called when a connection ends and another is about to be opened. */
  onReconnect?: (info: ReconnectInfo) => void;
}

export interface ReconnectInfo {
  /** `closed`: the server's routine close (reconnect at once); `failed`: an error (reconnect after backoff). */
  reason: 'closed' | 'failed';
  /** Wait before the next connection, in ms (0 after a routine close). */
  delayMs: number;
  /** Consecutive failures so far. */
  failures: number;
  error?: unknown;
}

/**
 * A feed's NDJSON stream as records: keepalive (empty) lines skipped; after the server's routine close
 * a new connection at once; after a failure (refused, cut, 429, 5xx) one after the recipe's backoff,
 * the failure count reset by the first record of a connection; a 4xx that cannot heal (401, 403) ends
 * it with its error, as do too many failures in a row.
 */
export async function* streamRecords<F extends FeedId>(
  client: UmbraClient,
  feed: F,
  options: StreamOptions,
): AsyncGenerator<FeedRecord<F>> {
  const { signal } = options;
  const factor = timestampFactor(FEEDS[feed].unit, options.timestamps ?? 'ms');
  const path = `/feeds/${FEEDS[feed].segment}/stream`;
  let failures = 0;
  while (!signal?.aborted) {
    let cleanClose = false;
    let error: unknown;
    let retryAfter: number | undefined;
    try {
      const res = await fetch(`${client.apiBase}${path}`, { headers: client.headers({ accept: 'application/x-ndjson' }), signal });
      if (!res.ok) {
        const text = await res.text().catch(() => '');
        const err = apiError(res.status, problemOf(res.status, text, res.statusText), res.headers, failures + 1);
        if (!RETRYABLE_STATUS.has(res.status)) throw err;
        error = err;
        retryAfter = err.retryAfter;
      } else {
        for await (const line of lines(res.body!)) {
          if (line.trim() === '') continue;
          const record = JSON.parse(line) as FeedRecord<F> & { timestamp?: unknown };
          if (factor !== 1 && typeof record.timestamp === 'number') record.timestamp = Math.round(record.timestamp * factor);
          failures = 0;
          yield record;
        }
        cleanClose = true;
      }
    } catch (e) {
      if (signal?.aborted) return;
      if (e instanceof UmbraApiError) throw e;
      error = e;
    }
    if (cleanClose) {
      options.onReconnect?.({ reason: 'closed', delayMs: 0, failures });
      continue;
    }
    failures++;
    if (failures >= client.retry.maxAttempts) {
      if (error instanceof UmbraApiError) throw error;
      throw new ConnectionError(`stream ${feed}: ${(error as Error)?.message}`, error, failures);
    }
    const delayMs = backoffDelay(client.retry, failures, client.random, retryAfter);
    options.onReconnect?.({ reason: 'failed', delayMs, failures, error });
    try {
      await client.clock.sleep(delayMs, signal);
    } catch {
      return;
    }
  }
}

function timestampFactor(unit: 's' | 'ms', want: 'ms' | 's' | 'native'): number {
  if (want === 'native' || want === unit) return 1;
  return want === 'ms' ? 1000 : 0.001;
}

/** The lines of a body, as they arrive (a line is complete at its `\n`; a cut final fragment is dropped). */
async function* lines(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    rest += decoder.decode(chunk, { stream: true });
    let nl = rest.indexOf('\n');
    while (nl !== -1) {
      yield rest.slice(0, nl);
      rest = rest.slice(nl + 1);
      nl = rest.indexOf('\n');
    }
  }
}
