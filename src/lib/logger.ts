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
