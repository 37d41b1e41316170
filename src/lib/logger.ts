import { pino, type Logger } from 'pino';

/** Structured JSON logs. Anything that could hold a key is redacted, wherever it appears. */
export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'umbra' },
      redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', '*.secret', 'secret', '*.apiKey', 'apiKey'], censor: '[redacted]' },
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
