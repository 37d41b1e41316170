import { existsSync, statSync } from 'node:fs';
import { DATA_STATUS_PATH } from '../http/routes/data-status.ts';
import { FEED_IDS } from '../modules/feeds/feed-catalog.ts';
import { dataStatus, type DataStatus } from '../modules/intel/data-status.ts';
import { listAge } from '../modules/intel/lists/list-aging.ts';
import { operatorToken } from './local-secrets.ts';
import { runningServer } from './local-server.ts';
import { UsageError } from './output.ts';
import type { Command } from 'commander';
import type { Config } from '../config.ts';
import type { DatasetInfo } from '../modules/lookup/ip-dataset.ts';
import { action, cliStores } from './context.ts';
import { registerListVerbs } from './data-lists.ts';
import type { Output } from './output.ts';
import { createProgress, type ProgressEvent } from './progress.ts';

/** Builds the IP dataset file from the packaged public datasets, with a progress bar on stderr. */
export async function buildDatasetWithProgress(config: Config, out: Output): Promise<DatasetInfo> {
  out.info(
    `building the IP dataset into ${config.datasetFile} (about a minute; sources: DB-IP Lite and RouteViews/NRO via @ip-location-db, CC ` +
      `BY 4.0)`,
  );
  const progress = createProgress(true);
  const started = Date.now();
  // Loaded on use: admin verbs should not pay for the dataset code. On a thread of its own, so that the
  // build's memory is given back before `serve` loads the dataset.
  const { buildDatasetOnThread } = await import('../modules/dataset/dataset-build-thread.ts');
  try {
    const info = await buildDatasetOnThread(config.datasetFile, (e: ProgressEvent) => progress.update(e));
    progress.stop();
    out.info(
      `IP dataset built in ${((Date.now() - started) / 1000).toFixed(1)} s (${(statSync(config.datasetFile).size / 1e6).toFixed(1)} MB)`,
    );
    return info;
  } catch (e) {
    progress.stop();
    throw e;
  }
}

export function registerData(program: Command): void {
  const data = program.command('data').description('the IP dataset and intelligence lists');
  data
    .command('build')
    .description('build the IP dataset (network owner and location) from the packaged public datasets')
    .option('--if-missing', 'do nothing when a dataset file this version reads exists')
    .action(
      action(async (out, config, o: { ifMissing?: boolean }) => {
        const c = config();
        if (o.ifMissing) {
          const { datasetFileProblem } = await import('../modules/dataset/dataset-reader.ts');
          const problem = datasetFileProblem(c.datasetFile);
          if (!problem) {
            out.result({ file: c.datasetFile, built: false }, () => `${c.datasetFile} exists; nothing to do`);
            return;
          }
          out.info(`${problem}: building it`);
        }
        const info = await buildDatasetWithProgress(c, out);
        out.result({ file: c.datasetFile, built: true, info }, () => `dataset: ${c.datasetFile}\n${JSON.stringify(info.counts)}`);
      }),
    );
  data
    .command('status')
    .description(
      'versions and counts of the data lookups answer from: the IP dataset, imported lists, overlays, feed log; and what the running ' +
        'server has loaded',
    )
    .option('--server <url>', 'ask this umbra server (default: the local server when it runs)')
    .action(
      action(async (out, config, o: { server?: string }) => {
        const c = config();
        if (!existsSync(c.datasetFile)) throw new UsageError(`no IP dataset at ${c.datasetFile}; build it with 'umbra data build'`);
        const { readDatasetHeader } = await import('../modules/dataset/dataset-reader.ts');
        const header = readDatasetHeader(c.datasetFile);
        const stores = await cliStores(c);
        let status: DataStatus;
        try {
          status = await dataStatus({ ...header.info, file: c.datasetFile, bytes: statSync(c.datasetFile).size }, stores, FEED_IDS);
        } finally {
          await stores.close();
        }
        const base = o.server ?? runningServer(c);
        const server = base ? await serverStatus(base, c) : undefined;
        const result = { ...status, server: server ?? null };
        out.result(result, () => statusText(status, base, server));
      }),
    );
  registerListVerbs(data);
}

type ServerStatus = { url: string; data_version: string; intelligence?: DataStatus['intelligence'] } | { url: string; error: string };

/** What the running server answers from (operator token), or why it could not say. */
async function serverStatus(base: string, config: Config): Promise<ServerStatus> {
  const token = operatorToken(config, false);
  if (!token) return { url: base, error: `no operator token (set UMBRA_OPERATOR_TOKEN or run on the server's data dir)` };
  try {
    const res = await fetch(`${base}${DATA_STATUS_PATH}`, {
      headers: { authorization: `Bearer ${token}` },
      signal: AbortSignal.timeout(5000),
    });
    const body = (await res.json()) as DataStatus & { detail?: string };
    if (res.status !== 200) return { url: base, error: `answered ${res.status}: ${body.detail ?? ''}` };
    return { url: base, data_version: body.data_version, intelligence: body.intelligence };
  } catch (e) {
    return { url: base, error: (e as Error).message };
  }
}

function statusText(s: DataStatus, base: string | undefined, server: ServerStatus | undefined): string {
  const d = s.dataset;
  const when = (t: number) => new Date(t * 1000).toISOString().replace('.000Z', 'Z');
  const lines = [
    `data version   ${s.data_version}`,
    `IP dataset     ${d.file} (${((d.bytes ?? 0) / 1e6).toFixed(1)} MB), built ${when(d.built_at)}`,
    `  sources      ${Object.entries(d.sources)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
    `  ranges       network ${d.counts.v4_network_ranges} IPv4 + ${d.counts.v6_network_ranges} IPv6, location ` +
      `${d.counts.v4_location_ranges} IPv4 + ${d.counts.v6_location_ranges} IPv6`,
    `lists          ${s.lists.length}${s.lists.length ? '' : ' (import with umbra data import-list KIND FILE)'}`,
    ...s.lists.map(
      (l) =>
        `  ${l.kind.padEnd(18)} ${l.provider.padEnd(20)} ${String(l.cidrs).padStart(7)} ranges  version ${l.version}  published ` +
        `${when(l.published_at)}${l.published_from === 'content' ? '' : ` (${l.published_from})`}, ` +
        `${listAge(l, Math.floor(Date.now() / 1000)).state}  imported ${when(l.imported_at)}  (${l.format})`,
    ),
    `overlays       ${s.overlays.entries} entries for ${s.overlays.teams} teams`,
    `feed log       (hours stored, oldest and newest)`,
    ...s.feeds.map(
      (f) =>
        `  ${f.feed.padEnd(18)} ${String(f.hours).padStart(5)}  ${f.oldest_hour ?? '-'} .. ${f.newest_hour ?? '-'}` +
        `${f.simulated ? '  SIMULATED: demo records (not real data)' : ''}`,
    ),
  ];
  if (!base) lines.push('server         not running on this data dir');
  else if (server && 'error' in server) lines.push(`server         ${server.url}: ${server.error}`);
  else if (server) {
    const same = server.data_version === s.data_version;
    lines.push(
      `server         ${server.url} answers from ` +
        `${same ? 'this version' : `${server.data_version} (the files above are newer: the server swaps them in within seconds)`}`,
    );
    const intel = server.intelligence;
    if (intel) {
      lines.push(`  intelligence ${intel.addresses} addresses with feed observations in the 90-day window`);
      // Older servers answer without the memory members.
      if (intel.budget_bytes !== undefined) {
        const mib = (n: number) => (n / 2 ** 20).toFixed(1);
        lines.push(
          `  memory       ${mib(intel.bytes)} MiB of its ${mib(intel.budget_bytes)} MiB budget (UMBRA_INTEL_MEMORY_MB); evicted ` +
            `${intel.evictions.addresses} addresses, ${intel.evictions.ranges} anonymizer ranges`,
        );
      }
    }
  }
  return lines.join('\n');
}
