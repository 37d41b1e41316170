import pg from 'pg';
import { AppError, FAULT_RETRY_AFTER_S } from '../../errors.ts';

export interface PgPoolOptions {
  /**
   * The schema umbra's tables are in: the connections' search_path (tests use one per run). Default:
   * the server's own search_path, which is `public` unless the operator changed it.
   */
  schema?: string;
  /** Connections at most (default 10). */
  max?: number;
  /** How long getting a connection may take, a new one or a free one of the pool (ms, default 1800). */
  connectTimeoutMs?: number;
  /** Deadline of one statement, kept by the server; the client gives up 300 ms later (ms, default 1500). */
  statementTimeoutMs?: number;
  /**
   * After the database did not answer in time (a connection or a statement timed out on the client's
   * side: a server that hangs rather than refuses), calls fail at once for this long, then one call
   * tries again while the others keep failing at once (ms, default 1000).
   */
  silentHoldMs?: number;
  /** An unused connection is closed after this long (ms, default 30000). */
  idleTimeoutMs?: number;
  /** Shown in pg_stat_activity (default `umbra`). */
  applicationName?: string;
  /** A connection failed while unused (the server restarted, the network dropped): the pool drops it. */
  onIdleError?: (err: Error) => void;
  /** Told once when statements start failing because the database cannot be used, and once when it is back. */
  onUnavailable?: (reason: string) => void;
  onRecovered?: (unavailableMs: number) => void;
  now?: () => number;
}

/** What runs a statement: the pool, or one connection inside a transaction. */
export interface PgQueryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** A schema name umbra accepts: lower-case letters, digits and underscores, so it needs no quoting anywhere. */
export function checkSchemaName(schema: string): string {
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid PostgreSQL schema name ${JSON.stringify(schema)}: use [a-z_][a-z0-9_]*`);
  return schema;
}

// bigint columns (amounts, sizes, ms timestamps) come back as numbers; umbra's values stay far below
// 2^53, and one that does not is an error rather than a silently rounded number.
const parseInt8 = (text: string): number => {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`a bigint column holds ${text}, beyond what a number represents exactly`);
  return n;
};
const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 && format !== 'binary'
      ? parseInt8
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

// Errors that say the database cannot be used right now, not that a statement is wrong.
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
]);
// SQLSTATE: 08 connection exceptions, 53 insufficient resources (too many connections, disk full),
// 57P01-57P04 shutdown, crash, starting up, 57014 the statement deadline, 55P03 a lock not granted in
// time, 40001/40P01 a conflict with another transaction, 25006 a read-only server (a standby after a
// failover), 28 refused credentials, 3D000 no such database.
const SQLSTATE = /^(08[0-9A-Z]{3}|53[0-9A-Z]{3}|57P0[1-4]|57014|55P03|40001|40P01|25006|28[0-9A-Z]{3}|3D000)$/;
// Faults that mean the server did not answer at all (it hangs, or the network drops packets), as
// opposed to refusing: waiting for those again on every statement is what would make requests slow.
const SILENT = new Set(['connect timeout', 'statement timeout', 'ETIMEDOUT']);
// node-postgres reports these without a code.
const DRIVER_MESSAGES: Array<[RegExp, string]> = [
  [/timeout exceeded when trying to connect|connection timeout/i, 'connect timeout'],
  [/Query read timeout/i, 'statement timeout'],
  [/Connection terminated|connection error|Connection ended|not queryable/i, 'connection lost'],
];

/** Why `err` means the database is unavailable (a code or a short phrase, never an address), or undefined. */
export function pgFaultReason(err: unknown): string | undefined {
  if (typeof err !== 'object' || err === null || err instanceof AppError) return undefined;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (NETWORK_CODES.has(code) || SQLSTATE.test(code))) return code;
  // Several addresses tried (localhost as ::1 and 127.0.0.1): node reports them together.
  if (err instanceof AggregateError) return err.errors.map(pgFaultReason).find((r) => r !== undefined);
  const message = (err as { message?: unknown }).message;
  if (typeof message === 'string') for (const [re, reason] of DRIVER_MESSAGES) if (re.test(message)) return reason;
  return undefined;
}

/**
 * A PostgreSQL fault as the error every transport answers 503 UNAVAILABLE with Retry-After (as the
 * embedded database's gate reports a locked file); undefined for anything else (a bug stays a 500).
 */
export function pgFault(err: unknown): AppError | undefined {
  const reason = pgFaultReason(err);
  if (reason === undefined) return undefined;
  const fault = new AppError('UNAVAILABLE', `The database is unavailable right now (${reason}). Retry shortly.`, {
    retryAfter: FAULT_RETRY_AFTER_S,
  });
  fault.cause = err;
  return fault;
}

/**
 * The distributed stores' one way to PostgreSQL: a pg.Pool whose every wait is bounded (getting a
 * connection, each statement, an idle transaction), so a database that is down or stuck gives the
 * caller UNAVAILABLE within about two seconds instead of a request that hangs; whose idle connections'
 * errors are caught (pg would otherwise crash the process on them); whose bigint columns read as numbers.
 */
export class PgPool implements PgQueryable {
  readonly pool: pg.Pool;
  private readonly now: () => number;
  private unavailableSince: number | undefined;
  private lastReason = '';
  /** Until then, calls fail at once: the database was found not answering (see silentHoldMs). 0: it answers. */
  private silentUntil = 0;
  /** A call is finding out whether a silent database answers again; the others fail at once meanwhile. */
  private probing = false;

  constructor(
    databaseUrl: string,
    private readonly opts: PgPoolOptions = {},
  ) {
    this.now = opts.now ?? Date.now;
    // Bounds of 1.5-1.8 s: a request that meets a database that hangs answers 503 within 2 s.
    const statementMs = opts.statementTimeoutMs ?? 1_500;
    this.pool = new pg.Pool({
      connectionString: databaseUrl,
      max: opts.max ?? 10,
      connectionTimeoutMillis: opts.connectTimeoutMs ?? 1_800,
      idleTimeoutMillis: opts.idleTimeoutMs ?? 30_000,
      // The server cancels a statement past its deadline (SQLSTATE 57014); the client stops waiting
      // shortly after, for a server that no longer answers at all.
      statement_timeout: statementMs,
      query_timeout: statementMs + 300,
      // A node stalled inside a transaction must not hold a team's row locked for long.
      idle_in_transaction_session_timeout: Math.max(5_000, 2 * statementMs),
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: opts.applicationName ?? 'umbra',
      ...(opts.schema === undefined ? {} : { options: `-c search_path=${checkSchemaName(opts.schema)}` }),
      types: TYPES,
    });
    this.pool.on('error', (err) => opts.onIdleError?.(err));
  }

  /** One statement on any free connection. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    this.admit();
    try {
      return this.ok(await this.pool.query<R>(text, values));
    } catch (e) {
      // An idle connection the server ended (57P01) before this statement reached it: the statement never
      // ran, so it is sent once more on a fresh connection.
      if ((e as { code?: string }).code !== '57P01') throw this.fault(e);
      try {
        return this.ok(await this.pool.query<R>(text, values));
      } catch (again) {
        throw this.fault(again);
      }
    }
  }

  /**
   * `fn` inside BEGIN … COMMIT on one connection; rolled back when it throws. A connection that failed
   * is closed rather than handed to the next caller.
   */
  async tx<T>(fn: (q: PgQueryable) => Promise<T>): Promise<T> {
    this.admit();
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (e) {
      throw this.fault(e);
    }
    // The pool listens for errors only while a connection is idle; this one is ours until released.
    let broken: Error | undefined;
    const onError = (err: Error) => {
      broken = err;
    };
    client.on('error', onError);
    const q: PgQueryable = { query: (text, values) => client.query(text, values) };
    try {
      await client.query('BEGIN');
      const out = await fn(q);
      await client.query('COMMIT');
      return this.ok(out);
    } catch (e) {
      if (pgFaultReason(e) !== undefined) broken ??= e as Error;
      // A statement error leaves a usable connection whose transaction is aborted; a lost one has none.
      else if (!broken) await client.query('ROLLBACK').catch((err: Error) => void (broken = err));
      throw this.fault(e);
    } finally {
      client.removeListener('error', onError);
      client.release(broken ?? false);
    }
  }

  /** What /health says while statements keep failing because the database cannot be used. */
  problems(): string[] {
    if (this.unavailableSince === undefined) return [];
    const s = Math.round((this.now() - this.unavailableSince) / 1000);
    return [`database: unavailable for ${s} s (${this.lastReason}); requests that need it answer 503`];
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  /**
   * Fails at once while the database was just found silent: a request reads the key, the limits and
   * the balance, and waiting out the timeout for each would take it past 2 s; other requests would
   * each wait too. After the hold, one call finds out whether it answers again.
   */
  private admit(): void {
    if (this.silentUntil === 0) return;
    if (this.probing || this.now() < this.silentUntil) {
      const fault = new AppError('UNAVAILABLE', `The database is unavailable right now (${this.lastReason}). Retry shortly.`, {
        retryAfter: FAULT_RETRY_AFTER_S,
      });
      throw fault;
    }
    this.probing = true;
  }

  private ok<T>(value: T): T {
    this.silentUntil = 0;
    this.probing = false;
    if (this.unavailableSince !== undefined) {
      const ms = this.now() - this.unavailableSince;
      this.unavailableSince = undefined;
      this.opts.onRecovered?.(ms);
    }
    return value;
  }

  /** The error to throw for `e`; a statement the server refused still shows the database answers. */
  private fault(e: unknown): unknown {
    const fault = pgFault(e);
    if (!fault) return this.ok(e);
    this.lastReason = pgFaultReason(e)!;
    this.probing = false;
    this.silentUntil = SILENT.has(this.lastReason) ? this.now() + (this.opts.silentHoldMs ?? 1_000) : 0;
    if (this.unavailableSince === undefined) {
      this.unavailableSince = this.now();
      this.opts.onUnavailable?.(this.lastReason);
    }
    return fault;
  }
}
