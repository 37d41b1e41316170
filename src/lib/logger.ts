import { pino, type Logger } from 'pino';
import { redactUrl, scrubSecrets } from './redact-url.ts';

/** A request as logged (fastify's `req` serializer would log the raw URL, signature and all). */
function reqSerializer(req: { method?: string; url?: string; ip?: string; socket?: { remoteAddress?: string } }) {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? redactUrl(req.url) : undefined,
    remoteAddress: req.ip ?? req.socket?.remoteAddress,
  };
}

/**
 * pino's error serializer, without the parser's `rawPacket` (the raw request bytes node attaches to a
 * parse error: its request line may be a presigned URL) and with secret query values scrubbed from
 * every string member (fastify quotes request URLs in some of its error messages).
 */
function errSerializer(e: Error): unknown {
  const out = pino.stdSerializers.err(e) as unknown as Record<string, unknown>;
  if (out === null || typeof out !== 'object') return out;
  delete out.rawPacket;
  for (const k of Object.keys(out)) {
    const v = out[k];
    if (typeof v === 'string') out[k] = scrubSecrets(v);
  }
  return out;
}

/** Structured JSON logs. Anything that could hold a key is redacted, wherever it appears. */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'umbra' },
      redact: {
        paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', '*.secret', 'secret', '*.apiKey', 'apiKey'],
        censor: '[redacted]',
      },
      serializers: { req: reqSerializer, err: errSerializer },
      // Messages are scrubbed too: a library's message may quote a request URL (fastify's "Reply was
      // already sent ... in the <url> route"). A string without '=' costs one indexOf.
      hooks: {
        logMethod(args, method) {
          for (let i = 0; i < args.length; i++) {
            const a = args[i];
            if (typeof a === 'string') args[i] = scrubSecrets(a);
          }
          return method.apply(this, args);
        },
      },
    },
    // Asynchronous writes: lines written while a write is in flight are coalesced into one syscall.
    destination ?? pino.destination({ sync: false }),
  );
}

type LevelName = 'trace' | 'debug' | 'info' | 'warn' | 'error' | 'fatal';

/**
 * Stands in for the per-request child logger that fastify makes to bind the request id. pino's child()
 * serializes its bindings through redaction, a few µs per request that most requests never use: the
 * access line is written by the root logger with the id in it. The real child is made on first use.
 */
export function lazyChildLogger(parent: Logger, bindings: Record<string, unknown>, options: object): Logger {
  return new LazyChildLogger(parent, bindings, options) as unknown as Logger;
}

class LazyChildLogger {
  private made: Logger | undefined;

  constructor(
    private readonly parent: Logger,
    private readonly bound: Record<string, unknown>,
    private readonly options: object,
  ) {}

  private get real(): Logger {
    return (this.made ??= this.parent.child(this.bound, this.options));
  }

  private log(level: LevelName, args: unknown[]): void {
    if (this.made === undefined && !this.parent.isLevelEnabled(level)) return;
    (this.real[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return (this.made ?? this.parent).level;
  }
  set level(level: string) {
    this.real.level = level;
  }
  isLevelEnabled(level: string): boolean {
    return (this.made ?? this.parent).isLevelEnabled(level);
  }
  trace(...args: unknown[]): void {
    this.log('trace', args);
  }
  debug(...args: unknown[]): void {
    this.log('debug', args);
  }
  info(...args: unknown[]): void {
    this.log('info', args);
  }
  warn(...args: unknown[]): void {
    this.log('warn', args);
  }
  error(...args: unknown[]): void {
    this.log('error', args);
  }
  fatal(...args: unknown[]): void {
    this.log('fatal', args);
  }
  silent(): void {}
  child(bindings: Record<string, unknown>, options?: object): Logger {
    return this.real.child(bindings, options);
  }
  bindings(): Record<string, unknown> {
    return this.real.bindings();
  }
  flush(cb?: (err?: Error) => void): void {
    this.parent.flush(cb);
  }
}
