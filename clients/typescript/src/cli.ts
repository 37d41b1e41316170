#!/usr/bin/env node
// umbra-client: the umbra API from the shell, on the SDK (retries, batching, reconnects, verified downloads).
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { DEFAULT_BASE_URL, UmbraClient } from './client.js';
import { ConnectionError, IntegrityError, UmbraApiError, UmbraError } from './errors.js';
import { FEEDS, isFeedId, type FeedId } from './feeds.js';
import { LookupManyError } from './batch.js';

/** Exit codes, distinct per kind of failure so scripts can tell them apart. */
export const EXIT = {
  ok: 0,
  /** Done in part: some inputs were invalid, the rest answered. */
  partial: 1,
  usage: 2,
  /** 401 or 403: the key or its scopes. */
  auth: 3,
  /** 402: lookup credits exhausted. */
  credits: 4,
  /** 404: no such snapshot. */
  notFound: 5,
  /** 429 or 5xx after every retry, or the connection failed. */
  unavailable: 6,
  /** A download did not match its metadata. */
  integrity: 7,
  /** Any other refusal (400 ...). */
  refused: 8,
} as const;

const USAGE = `usage: umbra-client [--base-url URL] [--json] VERB ...
  account                         the key's account, scopes and credits
  lookup IP...                    look addresses up (none given: one per line from stdin, batched)
  lookup domain NAME [--limit N]  honeypot intelligence about a domain
  feeds list FEED [--limit N]     every snapshot of a feed, newest first
  feeds meta FEED ID              a snapshot's metadata (ID: latest, YYYY-MM-DD or YYYY-MM-DD/H)
  feeds download FEED ID FILE     download a snapshot, checksum verified, resuming FILE.part
  stream FEED [--max-events N] [--duration S]   live records as NDJSON, reconnecting
FEED: ${Object.keys(FEEDS).join(', ')}
The API key comes from UMBRA_API_KEY. --base-url defaults to ${DEFAULT_BASE_URL}.
Exit codes: 0 ok, 1 partly done, 2 usage, 3 key/scope (401/403), 4 credits (402), 5 not found,
6 unavailable (429/5xx/connection, after retries), 7 checksum mismatch, 8 other refusal.`;

class UsageError extends Error {}

const out = (s: string) => process.stdout.write(`${s}\n`);

function table(rows: Array<Record<string, unknown>>): string {
  if (rows.length === 0) return '(none)';
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) =>
    vals
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(cols), line(widths.map((w) => '-'.repeat(w))), ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
}

function feedArg(s: string | undefined): FeedId {
  if (!s || !isFeedId(s)) throw new UsageError(`FEED must be one of ${Object.keys(FEEDS).join(', ')}${s ? `, not ${s}` : ''}`);
  return s;
}

function positiveInt(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`${name} must be a positive integer`);
  return Number(v);
}

async function readStdinLines(): Promise<string[]> {
  const ips: string[] = [];
  for await (const l of createInterface({ input: process.stdin })) if (l.trim()) ips.push(l.trim());
  return ips;
}

function progressBar(label: string): (done: number, total: number) => void {
  if (!process.stderr.isTTY) return () => {};
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (done < total && now - last < 100) return;
    last = now;
    const share = total > 0 ? done / total : 1;
    const width = 30;
    const fill = Math.round(share * width);
    process.stderr.write(
      `\r${label} [${'#'.repeat(fill)}${' '.repeat(width - fill)}] ${(share * 100).toFixed(0).padStart(3)}% ${done}/${total} bytes`,
    );
    if (done >= total) process.stderr.write('\n');
  };
}

export async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (e) {
    process.stderr.write(`${(e as Error).message}\n${USAGE}\n`);
    return EXIT.usage;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    out(USAGE);
    return EXIT.ok;
  }
  const json = values.json === true;
  try {
    const [verb, ...rest] = positionals;
    if (!verb) throw new UsageError('a VERB is needed');
    const client = new UmbraClient({ baseUrl: values['base-url'] ?? DEFAULT_BASE_URL });
    switch (verb) {
      case 'account': {
        const a = await client.account();
        if (json) out(JSON.stringify(a));
        else
          out(
            `${table([
              {
                name: `${a.first_name} ${a.last_name}`,
                email: a.email,
                organization: a.organization.name,
                relation: a.organization.relation,
                credits: a.lookup_quota.credits,
                resets_in_s: a.lookup_quota.resets_in,
              },
            ])}\nscopes: ${a.scopes.join(', ')}`,
          );
        return EXIT.ok;
      }
      case 'lookup': {
        if (rest[0] === 'domain') {
          if (rest.length !== 2) throw new UsageError('lookup domain NAME');
          const d = await client.lookupDomain(rest[1]!, { limit: positiveInt('--limit', values.limit) });
          if (json) out(JSON.stringify(d));
          else {
            out(
              table([
                {
                  domain: d.data.domain,
                  status: d.data.status,
                  events_24h: d.data.stats.events_24h,
                  events_30d: d.data.stats.total_events_30d,
                },
              ]),
            );
            if (d.data.recent_events.length) out(`\n${table(d.data.recent_events.slice(0, 20))}`);
          }
          return EXIT.ok;
        }
        const ips = rest.length ? rest : await readStdinLines();
        if (ips.length === 0) throw new UsageError('lookup IP... (or addresses on stdin, one per line)');
        const r = await client.lookupMany(ips);
        if (json)
          out(
            JSON.stringify({
              results: r.results.map((x, i) => x ?? { ip: ips[i], invalid: true }),
              invalid: r.invalid,
              credits: r.credits,
            }),
          );
        else {
          out(
            table(
              r.results.map((x, i) =>
                x
                  ? {
                      ip: x.ip,
                      asn: x.network.asn,
                      isp: x.network.isp,
                      type: x.network.type,
                      country: x.location.country,
                      risk: x.intelligence.risk_score,
                      categories: x.intelligence.categories.join(','),
                    }
                  : { ip: ips[i], isp: '(invalid address)' },
              ),
            ),
          );
          process.stderr.write(`${r.results.length} addresses, ${r.batches.length} batch(es), ${r.credits} credits\n`);
        }
        return r.invalid.length ? EXIT.partial : EXIT.ok;
      }
      case 'feeds': {
        const [sub, f, id, file] = rest;
        const feed = feedArg(f);
        if (sub === 'list') {
          const items = [];
          for await (const s of client.snapshots(feed, { pageSize: positiveInt('--limit', values.limit) })) items.push(s);
          if (json) out(JSON.stringify(items));
          else out(table(items.map(({ download_path: _, ...s }) => s)));
          return EXIT.ok;
        }
        if (!id) throw new UsageError(`feeds ${sub ?? 'list|meta|download'} FEED ID`);
        if (sub === 'meta') {
          const m = await client.snapshotMeta(feed, id);
          if (json) out(JSON.stringify(m));
          else {
            const { schema, ...rest2 } = m;
            out(`${table([rest2])}\n\n${table(schema.fields)}`);
          }
          return EXIT.ok;
        }
        if (sub === 'download') {
          if (!file) throw new UsageError('feeds download FEED ID FILE');
          const r = await client.downloadSnapshot(feed, id, file, { onProgress: progressBar(`${feed} ${id}`) });
          const summary = { file: r.file, size: r.size, sha256: r.sha256, resumed_from: r.resumedFrom, verified: true };
          out(json ? JSON.stringify(summary) : table([summary]));
          return EXIT.ok;
        }
        throw new UsageError('feeds list|meta|download');
      }
      case 'stream': {
        const feed = feedArg(rest[0]);
        const max = positiveInt('--max-events', values['max-events']);
        const seconds = positiveInt('--duration', values.duration);
        const stop = new AbortController();
        const timer = seconds === undefined ? undefined : setTimeout(() => stop.abort(), seconds * 1000);
        process.once('SIGINT', () => stop.abort());
        let n = 0;
        try {
          for await (const rec of client.stream(feed, {
            signal: stop.signal,
            timestamps: 'native',
            onReconnect: (i) => process.stderr.write(`stream ${feed}: ${i.reason}, reconnecting in ${i.delayMs} ms\n`),
          })) {
            // NDJSON either way: a table cannot be printed before the stream ends.
            if (!process.stdout.write(`${JSON.stringify(rec)}\n`)) await new Promise((r) => process.stdout.once('drain', r));
            if (max !== undefined && ++n >= max) break;
          }
        } finally {
          clearTimeout(timer);
        }
        return EXIT.ok;
      }
      default:
        throw new UsageError(`unknown verb ${verb}`);
    }
  } catch (e) {
    return failure(e, json);
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      'base-url': { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      limit: { type: 'string' },
      'max-events': { type: 'string' },
      duration: { type: 'string' },
    },
  });
}

function failure(e: unknown, json: boolean): number {
  const err = e instanceof LookupManyError ? (e.cause as unknown) : e;
  let code: number = EXIT.refused;
  if (err instanceof UsageError) {
    process.stderr.write(`${err.message}\n${USAGE}\n`);
    return EXIT.usage;
  }
  if (err instanceof UmbraApiError) {
    code =
      err.status === 401 || err.status === 403
        ? EXIT.auth
        : err.status === 402
          ? EXIT.credits
          : err.status === 404
            ? EXIT.notFound
            : err.status === 429 || err.status >= 500
              ? EXIT.unavailable
              : EXIT.refused;
  } else if (err instanceof ConnectionError) code = EXIT.unavailable;
  else if (err instanceof IntegrityError) code = EXIT.integrity;
  else if (err instanceof UmbraError) code = EXIT.usage;
  else throw e;
  const message = (err as Error).message;
  if (json) {
    const body =
      err instanceof UmbraApiError
        ? { error: err.name, status: err.status, problem: err.problem, retry_after: err.retryAfter }
        : { error: (err as Error).name, message };
    process.stderr.write(`${JSON.stringify(body)}\n`);
  } else process.stderr.write(`umbra-client: ${message}\n`);
  return code;
}

process.exitCode = await main(process.argv.slice(2));
