import { createReadStream, statSync } from 'node:fs';
import { request } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import { AppError } from '../errors.ts';
import { systemClock } from '../lib/clock.ts';
import { csvItems } from '../modules/feeds/csv-items.ts';
import { FEED_IDS, findFeed, type FeedDef } from '../modules/feeds/feed-catalog.ts';
import { RecordValidator } from '../modules/feeds/feed-records.ts';
import { checkIngestKey } from '../modules/feeds/ingest-keys.ts';
import { IngestInterrupted, IngestService, type IngestSummary } from '../modules/feeds/ingest-service.ts';
import { ndjsonFromBytes } from '../modules/feeds/line-splitter.ts';
import { createFeedStores } from '../storage/index.ts';
import { action, cliStoreLog } from './context.ts';
import { operatorToken } from './local-secrets.ts';
import { dataDirState, describeOwner, withDataDir } from './local-server.ts';
import { EXIT, UsageError, type Output } from './output.ts';
import { createProgress } from './progress.ts';

/** A server's answer that it stopped on a storage fault after storing `summary.accepted` records. */
class IngestStopped extends Error {
  constructor(
    message: string,
    readonly summary: IngestSummary,
  ) {
    super(message);
  }
}

interface IngestOptions {
  format?: string;
  server?: string;
  local?: boolean;
  idempotencyKey?: string;
}

/** `umbra ingest FEED FILE|-`: validates and stores records, through the running server when there is one. */
export function registerIngest(program: Command): void {
  program
    .command('ingest')
    .description('ingest feed records (NDJSON, or CSV for proxies, anonymizers and ja4t) from a file or - for stdin')
    .argument('<feed>', `feed id or URL segment: ${FEED_IDS.join(', ')}`)
    .argument('<file>', 'input file, or - for standard input')
    .option('--format <format>', 'ndjson or csv (default: csv for *.csv files, else ndjson)')
    .option('--server <url>', 'send to this umbra server (default: the server running on the data dir, if one is)')
    .option('--local', 'write straight into the data dir (refused while a server runs on it)')
    .option(
      '--idempotency-key <key>',
      'a key of this batch: run again with the same key and file, only what was not stored yet is stored (kept 24 h)',
    )
    .action(
      action(async (out, configOf, feedName: string, file: string, o: IngestOptions) => {
        const config = configOf();
        const feed = findFeed(feedName);
        if (!feed) throw AppError.field('feed', `unknown feed '${feedName}'; one of ${FEED_IDS.join(', ')}`);
        const format = o.format ?? (file.toLowerCase().endsWith('.csv') ? 'csv' : 'ndjson');
        if (format !== 'ndjson' && format !== 'csv') throw AppError.field('format', "must be 'ndjson' or 'csv'");
        if (format === 'csv' && !feed.csv) throw AppError.field('format', `the ${feed.id} feed has nested records: use NDJSON`);
        const keyProblem = o.idempotencyKey === undefined ? undefined : checkIngestKey(o.idempotencyKey);
        if (keyProblem) throw AppError.field('idempotency-key', keyProblem);
        const key = o.idempotencyKey;
        let size = 0;
        if (file !== '-') {
          try {
            size = statSync(file).size;
          } catch {
            throw new UsageError(`cannot read ${file}`);
          }
        }
        const progress = createProgress(true);
        let done = 0;
        const counted = new Transform({
          transform(chunk: Buffer, _enc, cb) {
            done += chunk.length;
            progress.update({ phase: `ingest ${feed.id}`, done, total: size || done });
            cb(null, chunk);
          },
        });
        // Where the records go: the server named, else the server holding the data dir (found from the
        // data dir itself), else the data dir, held while writing. Never past a running server.
        // Distributed mode has no data dir to own: without --server the records go straight to JetStream,
        // from where every node receives them.
        const state = o.server || config.storage === 'distributed' ? undefined : dataDirState(config);
        if (state?.kind === 'server' && o.local)
          throw new UsageError(`a server runs on this data dir: ${describeOwner(state.owner)}; records must go through it (drop --local)`);
        if (state?.kind === 'busy')
          throw new UsageError(
            `the data dir ${config.dataDir} is in use by ${describeOwner(state.owner)}; nothing was written (try again once it has ` +
              `finished)`,
          );
        const server = o.server ?? (state?.kind === 'server' ? state.url : undefined);
        const input = (file === '-' ? process.stdin : createReadStream(file)).pipe(counted);
        let summary: IngestSummary;
        try {
          summary = server
            ? await remote(server, config, feed, format, input, out, key)
            : config.storage === 'distributed'
              ? await local(config, feed, format, input, key)
              : await withDataDir(config, 'ingest', () => local(config, feed, format, input, key));
        } catch (e) {
          if (!(e instanceof IngestInterrupted || e instanceof IngestStopped)) throw e;
          // A storage fault stopped the ingest: say what was stored, and exit as for partial work.
          report(out, e.summary);
          out.info(`umbra: ${e.message}`);
          return e.summary.accepted > 0 ? EXIT.PARTIAL : EXIT.FAILED;
        } finally {
          progress.stop();
        }
        report(out, summary);
        if (summary.rejected === 0) return EXIT.OK;
        return summary.accepted > 0 ? EXIT.PARTIAL : EXIT.FAILED;
      }),
    );
}

/** Ingests through the configured feed log and bus: the data dir's files, or JetStream in distributed mode. */
async function local(config: Config, feed: FeedDef, format: string, input: Readable, key: string | undefined): Promise<IngestSummary> {
  const stores = await createFeedStores(config, cliStoreLog);
  const service = new IngestService(stores.feedLog, stores.bus, new RecordValidator(() => systemClock.now()), cliStoreLog, {
    store: stores.ingestKeys,
    now: () => systemClock.now(),
  });
  try {
    const items = format === 'csv' ? csvItems(feed, input) : ndjsonFromBytes(input);
    return await service.ingest(feed, items, key === undefined ? {} : { idempotencyKey: key });
  } finally {
    await stores.close();
  }
}

function remote(
  base: string,
  config: Config,
  feed: FeedDef,
  format: string,
  input: Readable,
  out: Output,
  key: string | undefined,
): Promise<IngestSummary> {
  const token = operatorToken(config, false);
  if (!token)
    throw new UsageError(`no operator token: set UMBRA_OPERATOR_TOKEN or run on the server's data dir (${config.operatorTokenFile})`);
  out.info(`sending to ${base}`);
  return new Promise((resolve, reject) => {
    const req = request(`${base}/internal/v1/ingest/${feed.id}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': format === 'csv' ? 'text/csv' : 'application/x-ndjson',
        ...(key === undefined ? {} : { 'idempotency-key': key }),
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        const body = text ? JSON.parse(text) : {};
        if (res.statusCode === 200) return resolve(body as IngestSummary);
        if (res.statusCode === 400 && body.errors) {
          // Nothing was accepted: the problem body lists the bad records.
          const errors = Object.entries(body.errors as Record<string, string[]>).map(([k, m]) => {
            const [, record, field] = /^record (\d+): (.*)$/.exec(k) ?? [undefined, '0', k];
            return { record: Number(record), field: field!, message: m.join('; '), reason: 'invalid_value' as const };
          });
          return resolve({ feed: feed.id, accepted: 0, rejected: errors.length, by_reason: {}, errors });
        }
        if (typeof body.accepted === 'number') {
          // The server stopped on a storage fault: body.accepted records were stored, none after.
          const summary: IngestSummary = {
            feed: feed.id,
            accepted: body.accepted,
            rejected: body.rejected ?? 0,
            by_reason: {},
            errors: [],
          };
          return reject(new IngestStopped(`the server answered ${res.statusCode}: ${body.detail}`, summary));
        }
        reject(new UsageError(`server answered ${res.statusCode}: ${body.detail ?? text}`));
      });
    });
    req.on('error', reject);
    input.on('error', (e) => req.destroy(e));
    input.pipe(req);
  });
}

function report(out: Output, s: IngestSummary): void {
  out.result(s, () => {
    const reasons = Object.entries(s.by_reason)
      .map(([r, n]) => `${r}: ${n}`)
      .join(', ');
    const lines = [`${s.feed}: ${s.accepted} accepted, ${s.rejected} rejected${reasons ? ` (${reasons})` : ''}`];
    if (s.replayed) lines.push('  (an earlier ingest under this idempotency key stored these; nothing was stored now)');
    for (const e of s.errors) lines.push(`  record ${e.record}: ${e.field}: ${e.message}`);
    if (s.rejected > s.errors.length) lines.push(`  … and ${s.rejected - s.errors.length} more`);
    return lines.join('\n');
  });
}
