import { Redis } from 'ioredis';

export interface RedisClientOptions {
  /**
   * Longest wait for one command's answer (ms), 1 s by default: a Redis that hangs (stopped, partitioned)
   * fails the request with a 503 instead of holding it.
   */
  commandTimeoutMs?: number;
  /** Longest wait for a connection to be set up (ms), 2 s by default. */
  connectTimeoutMs?: number;
  /** Longest pause between reconnection attempts (ms), 1 s by default: how soon after Redis is back it is used again. */
  maxReconnectDelayMs?: number;
  /** Shown in Redis's CLIENT LIST. */
  connectionName?: string;
  /**
   * Told of each connection error (refused, reset, timed out) while the client keeps reconnecting, about
   * once a second during an outage; ignored by default (requests report the outage as 503s).
   */
  onError?: (err: Error) => void;
}

/**
 * A Redis connection for the distributed backends, set up so that no request waits on a Redis that is
 * down, and no command is queued or sent again after its caller gave up (one already written when Redis
 * hangs may still run when it resumes: a token or a lease of at most one TTL spent for nobody):
 * - `enableOfflineQueue: false`: while disconnected a command fails at once rather than queue (ioredis
 *   would run queued commands on reconnect, after the request got its 503);
 * - `maxRetriesPerRequest: 0` and `autoResendUnfulfilledCommands: false`: commands in flight when the
 *   connection drops fail at once and are never sent again (a script may or may not have run);
 * - `commandTimeout`: a Redis that accepts the connection but does not answer fails a command within
 *   `commandTimeoutMs`;
 * - reconnection forever, at most `maxReconnectDelayMs` apart, so the same client works again shortly
 *   after Redis is back, with nothing to recreate;
 * - auto-pipelining: concurrent commands go out in one write, which is what carries a node's rate-limit
 *   takes at tens of thousands a second.
 * Every failure of these kinds reaches the caller as RedisUnavailableError (see redisFault), a 503.
 * Commands issued before the first connection is ready fail too: await redisReady() at start.
 */
export function createRedisClient(url: string, opts: RedisClientOptions = {}): Redis {
  const maxDelay = opts.maxReconnectDelayMs ?? 1_000;
  const client = new Redis(url, {
    enableAutoPipelining: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: opts.commandTimeoutMs ?? 1_000,
    connectTimeout: opts.connectTimeoutMs ?? 2_000,
    retryStrategy: (times) => Math.min(50 * 2 ** Math.min(times, 10), maxDelay),
    connectionName: opts.connectionName,
  });
  // Without a listener ioredis prints every connection error to stderr.
  client.on('error', opts.onError ?? (() => {}));
  return client;
}

/** Resolves when the client can take commands; rejects after `timeoutMs` (the caller's start fails clearly). */
export function redisReady(client: Redis, timeoutMs = 5_000): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      client.off('ready', onReady);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => done();
    const timer = setTimeout(
      () => done(new RedisUnavailableError(new Error(`not ready within ${timeoutMs} ms (status ${client.status})`))),
      timeoutMs,
    );
    client.on('ready', onReady);
  });
}

/**
 * Redis could not be used (unreachable, connection lost mid-command, no answer in time, loading,
 * read-only replica, out of memory). `code` is what errors.ts dependencyFault maps to 503 with Retry-After.
 */
export class RedisUnavailableError extends Error {
  readonly code = 'REDIS_UNAVAILABLE';

  constructor(cause: Error) {
    super(`Redis is unavailable: ${cause.message}`, { cause });
    this.name = 'RedisUnavailableError';
  }
}

// Replies of a Redis that works but cannot serve now; any other error reply is a bug of ours (a 500).
const TRANSIENT_REPLY = /^(LOADING|BUSY|MASTERDOWN|READONLY|TRYAGAIN|CLUSTERDOWN|OOM|MISCONF|NOREPLICAS)\b/;

/** Rethrows a failed command's error as RedisUnavailableError unless Redis answered that our command was wrong. */
export function redisFault(err: unknown): never {
  const e = err instanceof Error ? err : new Error(String(err));
  if (e.name === 'ReplyError' && !TRANSIENT_REPLY.test(e.message)) throw e;
  throw new RedisUnavailableError(e);
}
