import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { BACKOFF_GIVE_UP_ATTEMPTS, backoffDelayMs } from '../modules/sensor/backoff.ts';
import type { Spool, SpoolBatch } from './spool.ts';

/** The server's answer to one batch, as the uploader acts on it. */
export type PostOutcome =
  /** Stored (or stored before, under the same key): move on. */
  | { kind: 'stored'; accepted: number; rejected: number; replayed: boolean }
  /** The server will never take these records (every one invalid, or the key misused): move on, counted. */
  | { kind: 'refused'; status: number; detail: string }
  /** Try again later: the server is down, overloaded, or refuses the token for now. */
  | { kind: 'retry'; status: number; detail: string; retryAfterMs?: number };

export type PostBatch = (feed: string, key: string, body: Buffer) => Promise<PostOutcome>;

const INGEST_PATH = '/internal/v1/ingest';

/** POST /internal/v1/ingest/{feed} with the operator token and the batch's Idempotency-Key. */
export function ingestPoster(server: string, token: string, timeoutMs: number): PostBatch {
  const base = new URL(server);
  const https = base.protocol === 'https:';
  const agent = https ? new HttpsAgent({ keepAlive: true, maxSockets: 4 }) : new HttpAgent({ keepAlive: true, maxSockets: 4 });
  const request = https ? httpsRequest : httpRequest;
  const prefix = base.pathname.replace(/\/+$/, '');
  return (feed, key, body) =>
    new Promise<PostOutcome>((resolve) => {
      const req = request(
        {
          protocol: base.protocol,
          hostname: base.hostname,
          port: base.port,
          method: 'POST',
          path: `${prefix}${INGEST_PATH}/${feed}`,
          agent,
          headers: {
            authorization: `Bearer ${token}`,
            'content-type': 'application/x-ndjson',
            'content-length': body.length,
            'idempotency-key': key,
          },
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (c: Buffer) => {
            // An answer is a small summary; anything longer is not read into memory.
            if (size < 1_048_576) chunks.push(c);
            size += c.length;
          });
          res.on('error', (e) => resolve({ kind: 'retry', status: 0, detail: e.message }));
          res.on('end', () => resolve(classify(res.statusCode ?? 0, res.headers['retry-after'], Buffer.concat(chunks).toString('utf8'))));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (e) => resolve({ kind: 'retry', status: 0, detail: e.message }));
      req.end(body);
    });
}

function classify(status: number, retryAfter: string | string[] | undefined, text: string): PostOutcome {
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's error page): the status decides.
  }
  if (status === 200)
    return {
      kind: 'stored',
      accepted: Number(json.accepted) || 0,
      rejected: Number(json.rejected) || 0,
      replayed: json.replayed === true,
    };
  const detail = typeof json.detail === 'string' ? json.detail : text.slice(0, 200);
  const seconds = Number(Array.isArray(retryAfter) ? retryAfter[0] : retryAfter);
  const retryAfterMs = Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 3600) * 1000 : undefined;
  // 400 and 422: the records (or the key) can never be taken; sending them again would block the spool.
  // 401 and 403 are a token or allow-list the operator can fix: keep the records and retry.
  if (status === 400 || status === 413 || status === 415 || status === 422) return { kind: 'refused', status, detail };
  return { kind: 'retry', status, detail, ...(retryAfterMs ? { retryAfterMs } : {}) };
}

/** What /health and /metrics report of one feed's upload. */
export interface UploadStats {
  batches: number;
  /** Records the server stored (first time or replayed). */
  uploaded: number;
  /** Records the server refused as invalid. */
  rejected: number;
  /** Batches answered as replays (a resend after a lost answer or a crash). */
  replayed: number;
  failures: number;
  consecutiveFailures: number;
  lastSuccessMs: number | undefined;
  lastError: string | undefined;
}

export interface UploaderDeps {
  now: () => number;
  random: () => number;
  /** Waits `ms` or until the signal aborts (injected so tests run without real waits). */
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  onError?: (feed: string, detail: string, failures: number) => void;
}

export const abortableSleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

/**
 * Sends one feed's spool to the server, oldest first, one batch at a time (so records arrive in the
 * order they were captured). A batch leaves the spool only once the server answered it; failures back
 * off by the contract's recipe (1 s doubling to 60 s, ±25 % jitter) and never drop a record.
 */
export class FeedUploader {
  readonly stats: UploadStats = {
    batches: 0,
    uploaded: 0,
    rejected: 0,
    replayed: 0,
    failures: 0,
    consecutiveFailures: 0,
    lastSuccessMs: undefined,
    lastError: undefined,
  };
  private readonly abort = new AbortController();
  private running: Promise<void> | undefined;

  constructor(
    readonly feed: string,
    private readonly spool: Spool,
    private readonly post: PostBatch,
    private readonly opts: { batchRecords: number; batchBytes: number; lingerMs: number },
    private readonly deps: UploaderDeps,
  ) {}

  /** Past the recipe's give-up count: the operator should look (the spool still holds everything). */
  get failing(): boolean {
    return this.stats.consecutiveFailures >= BACKOFF_GIVE_UP_ATTEMPTS;
  }

  start(): void {
    this.running ??= this.loop().catch((e: Error) => {
      this.stats.lastError = `uploader stopped: ${e.message}`;
      this.deps.onError?.(this.feed, this.stats.lastError, this.stats.consecutiveFailures);
    });
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.running;
  }

  private async loop(): Promise<void> {
    const signal = this.abort.signal;
    while (!signal.aborted) {
      if (this.spool.depth === 0) {
        await this.spool.waitForRecords(signal);
        if (signal.aborted) break;
      }
      // Let the records of a burst share one POST, also while a flood goes on: sending what came during
      // the last POST at once made many small batches, and each costs both sides more than its records.
      if (this.opts.lingerMs > 0 && this.spool.depth < this.opts.batchRecords) {
        await this.deps.sleep(this.opts.lingerMs, signal);
        if (signal.aborted) break;
      }
      const batch = await this.spool.nextBatch(this.opts.batchRecords, this.opts.batchBytes);
      if (!batch) {
        await this.deps.sleep(100, signal);
        continue;
      }
      await this.send(batch, signal);
    }
  }

  /** Sends one batch until the server answers it for good. */
  private async send(batch: SpoolBatch, signal: AbortSignal): Promise<void> {
    const body = Buffer.concat(batch.lines.flatMap((l) => [l, NEWLINE]));
    while (!signal.aborted) {
      const r = await this.post(this.feed, batch.key, body);
      if (r.kind === 'stored' || r.kind === 'refused') {
        const s = this.stats;
        s.batches++;
        if (r.kind === 'stored') {
          s.uploaded += r.accepted;
          s.rejected += r.rejected;
          if (r.replayed) s.replayed++;
        } else {
          s.rejected += batch.lines.length;
          s.lastError = `batch ${batch.key} refused (${r.status}): ${r.detail}`;
          this.deps.onError?.(this.feed, s.lastError, 0);
        }
        s.consecutiveFailures = 0;
        s.lastSuccessMs = this.deps.now();
        await this.spool.ack(batch);
        return;
      }
      const s = this.stats;
      s.failures++;
      s.consecutiveFailures++;
      s.lastError = `${r.status ? `HTTP ${r.status}: ` : ''}${r.detail}`;
      this.deps.onError?.(this.feed, s.lastError, s.consecutiveFailures);
      await this.deps.sleep(r.retryAfterMs ?? backoffDelayMs(s.consecutiveFailures, this.deps.random), signal);
    }
  }
}

const NEWLINE = Buffer.from('\n');
