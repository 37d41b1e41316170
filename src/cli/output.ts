import { AppError, DEPENDENCY_UNAVAILABLE, dependencyFault, engineOf } from '../errors.ts';
import { ConfigError } from '../config.ts';

/** Exit codes of every verb: 0 done, 1 done only partly, 2 usage error or nothing done. */
export const EXIT = { OK: 0, PARTIAL: 1, FAILED: 2 } as const;

export class UsageError extends Error {}

export interface Output {
  json: boolean;
  /** The verb's result: JSON on stdout with --json, else the human text. */
  result(value: unknown, human: () => string): void;
  /** Messages and progress always go to stderr, so stdout stays machine-readable. */
  info(message: string): void;
}

export function createOutput(json: boolean): Output {
  return {
    json,
    result: (value, human) => process.stdout.write(json ? `${JSON.stringify(value, null, 2)}\n` : `${human()}\n`),
    info: (message) => process.stderr.write(`${message}\n`),
  };
}

/** What a storage fault means for a CLI verb, in one line. */
function faultLine(e: unknown): string | undefined {
  const fault = dependencyFault(e);
  if (!fault) return undefined;
  const code = (e as { code: string }).code;
  // A distributed engine (Redis, NATS) or a remote store (S3): not the data dir.
  const engine =
    engineOf(code) ?? (code === DEPENDENCY_UNAVAILABLE ? String((e as { dependency?: unknown }).dependency ?? 'storage') : undefined);
  const what =
    fault.code === 'INSUFFICIENT_STORAGE'
      ? 'the disk holding the data dir is full'
      : code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')
        ? 'the database is locked by another process'
        : engine
          ? `the ${engine} is unavailable`
          : 'the data dir cannot be written';
  return `${what} (${code}); nothing was changed. ${(e as Error).message !== code ? `(${(e as Error).message})` : ''}`.trim();
}

/**
 * Turns a failure into one clear line on stderr (and a JSON object with --json) and an exit code.
 * A stack trace only with UMBRA_DEBUG=1: operators read the line, developers ask for the stack.
 */
export function reportFailure(out: Output, e: unknown): number {
  if (e instanceof AppError) {
    const fields = e.context.fields ? Object.entries(e.context.fields).map(([f, m]) => `--${f}: ${m.join('; ')}`) : [e.message];
    if (out.json) process.stdout.write(`${JSON.stringify({ error: e.code, detail: e.message, errors: e.context.fields ?? {} })}\n`);
    for (const line of fields) out.info(`umbra: ${line}`);
    return EXIT.FAILED;
  }
  if (e instanceof UsageError || e instanceof ConfigError) {
    if (out.json) process.stdout.write(`${JSON.stringify({ error: 'USAGE', detail: e.message })}\n`);
    out.info(`umbra: ${e.message}`);
    return EXIT.FAILED;
  }
  const line = faultLine(e) ?? (e as Error)?.message ?? String(e);
  if (out.json) process.stdout.write(`${JSON.stringify({ error: dependencyFault(e)?.code ?? 'FAILED', detail: line })}\n`);
  out.info(`umbra: ${line}`);
  if (process.env.UMBRA_DEBUG === '1' && (e as Error)?.stack) out.info((e as Error).stack!);
  return EXIT.FAILED;
}

/** Parses a whole number argument or refuses it naming the option. */
export function wholeArg(name: string, text: string | undefined, min = 0): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text.trim())) throw AppError.field(name, `must be a whole number, got '${text}'`);
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < min) throw AppError.field(name, `must be a whole number of at least ${min}, got '${text}'`);
  return n;
}

export function numberArg(name: string, text: string): number {
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n)) throw AppError.field(name, `must be a number, got '${text}'`);
  return n;
}
