import { createHash } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { Command } from 'commander';
import { systemClock } from '../lib/clock.ts';
import { LIST_KINDS, listKind, PROVIDER_TAG_RULE, providerTag } from '../modules/intel/lists/list-kinds.ts';
import { ListImporter, ListImportError, type ImportRequest, type ImportSummary } from '../modules/intel/lists/list-importer.ts';
import { agingRule, listAge } from '../modules/intel/lists/list-aging.ts';
import { publisherTime } from '../modules/intel/lists/list-formats.ts';
import type { Config } from '../config.ts';
import type { IntelList, IntelListStore } from '../modules/intel/lists/intel-list.ts';
import { createListStore } from '../storage/index.ts';
import { action } from './context.ts';
import { EXIT, UsageError, type Output } from './output.ts';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function readInput(file: string): Promise<Buffer> {
  if (file !== '-') {
    try {
      return readFileSync(file);
    } catch (e) {
      throw new UsageError(`cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
    }
  }
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** `umbra data import-list`, `data lists`, `data remove-list`: the intelligence lists under the data dir. */
export function registerListVerbs(data: Command): void {
  data
    .command('import-list')
    .description('import an IP range list (Tor exits, crawler and service ranges, cloud ranges); the format is detected from the content')
    .argument(
      '<kind>',
      `what the ranges are: a category (TOR_NODE, SEARCH_ENGINE, ...) or a network type (DATACENTER, ...); case-insensitive, - or _`,
    )
    .argument('<file>', "the publisher's file, or - for standard input")
    .option(
      '--provider <tag>',
      'provider tag, e.g. GOOGLEBOT (default: from the format where it names its publisher: TOR, AWS, GOOGLE_CLOUD, AZURE, CLOUDFLARE, ' +
        'DATADOG, STRIPE, GITHUB)',
    )
    .option(
      '--published <date>',
      "the publisher's time for the list, ISO 8601 (2022-01-18 or 2022-01-18T11:00:00Z): for files that carry none (plain address and " +
        "CIDR lists, the Tor bulk exit list); it wins over the file's own. Default: the file's header, else the file's modification date",
    )
    .option(
      '--section <names>',
      'for files with sections (AWS services, Azure tags, Datadog, Stripe and GitHub sections): comma-separated names to import, or all',
    )
    .action(
      action(async (out, config, kind: string, file: string, o: { provider?: string; section?: string; published?: string }) => {
        if (!listKind(kind)) throw new UsageError(`unknown list kind '${kind}'; one of ${LIST_KINDS.join(', ')}`);
        let published: ImportRequest['published'];
        if (o.published !== undefined) {
          const at = publisherTime(o.published);
          if (at === undefined) throw new UsageError(`bad --published '${o.published}': an ISO 8601 date or date-time such as 2022-01-18`);
          published = { at, from: 'option' };
        }
        const bytes = await readInput(file);
        // A file kept with its server's date (curl -R, wget) carries the publisher's time; standard input has none.
        if (!published && file !== '-') published = { at: Math.floor(statSync(file).mtimeMs / 1000), from: 'file-date' };
        out.info(`reading ${file === '-' ? 'standard input' : file} (${bytes.length} bytes)`);
        let s: ImportSummary;
        try {
          s = await withListStore(config(), (store) =>
            new ListImporter(store, systemClock, sha256).import({
              kind,
              provider: o.provider,
              bytes,
              sections: o.section?.split(','),
              ...(published ? { published } : {}),
            }),
          );
        } catch (e) {
          if (e instanceof ListImportError) throw new UsageError(e.message);
          throw e;
        }
        report(out, s);
        if (!s.stored) return EXIT.FAILED;
        warnAge(out, s, Math.floor(systemClock.now() / 1000));
        return s.rejected > 0 ? EXIT.PARTIAL : EXIT.OK;
      }),
    );

  data
    .command('lists')
    .description(
      "the imported lists: kind, provider, version, the publisher's time and the list's age by its kind's rule (current, stale, " +
        'expired), import time, format and range count; warns on stale and expired lists',
    )
    .action(
      action(async (out, config) => {
        const nowS = Math.floor(systemClock.now() / 1000);
        const lists = (await withListStore(config(), (store) => store.all()))
          .map(({ kind, provider, version, imported_at, published_at, published_from, format, cidrs }) => {
            const age = listAge({ kind, published_at }, nowS);
            return {
              kind,
              provider,
              version,
              published_at,
              published_from,
              age_days: Math.floor(age.age_days),
              state: age.state,
              strength: Math.round(age.strength * 100) / 100,
              imported_at,
              format,
              count: cidrs.length,
            };
          })
          .sort((a, b) => a.kind.localeCompare(b.kind) || a.provider.localeCompare(b.provider));
        for (const l of lists) warnAge(out, l, nowS);
        out.result({ lists }, () => {
          if (lists.length === 0) return 'no lists imported (umbra data import-list KIND FILE)';
          const rows = lists.map((l) => [
            l.kind,
            l.provider,
            l.version,
            `${new Date(l.published_at * 1000).toISOString().slice(0, 19)}Z${l.published_from === 'content' ? '' : ` (${l.published_from})`}`,
            `${l.age_days}d`,
            l.state === 'stale' ? `stale ${l.strength}` : l.state,
            new Date(l.imported_at * 1000).toISOString(),
            l.format,
            String(l.count),
          ]);
          const head = ['KIND', 'PROVIDER', 'VERSION', 'PUBLISHED', 'AGE', 'STATE', 'IMPORTED', 'FORMAT', 'RANGES'];
          const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
          return [head, ...rows]
            .map((r) =>
              r
                .map((c, i) => c.padEnd(widths[i]!))
                .join('  ')
                .trimEnd(),
            )
            .join('\n');
        });
      }),
    );

  data
    .command('remove-list')
    .description('remove an imported list')
    .argument('<kind>', 'the list kind')
    .requiredOption('--provider <tag>', 'the list provider tag')
    .action(
      action(async (out, config, kindText: string, o: { provider: string }) => {
        const kind = listKind(kindText);
        if (!kind) throw new UsageError(`unknown list kind '${kindText}'; one of ${LIST_KINDS.join(', ')}`);
        const provider = providerTag(o.provider);
        if (!provider) throw new UsageError(`bad provider tag '${o.provider}': ${PROVIDER_TAG_RULE}`);
        const removed = await withListStore(config(), (store) => store.remove(kind, provider));
        out.result({ kind, provider, removed }, () =>
          removed ? `removed ${kind}/${provider}` : `no list ${kind}/${provider}; nothing removed`,
        );
        return removed ? EXIT.OK : EXIT.FAILED;
      }),
    );
}

/** On stderr, also with --json: a stale or expired list, and one whose age is counted from its import. */
function warnAge(out: Output, l: Pick<IntelList, 'kind' | 'provider' | 'published_at' | 'published_from'>, nowS: number): void {
  const rule = agingRule(l.kind);
  const age = listAge(l, nowS);
  const days = Math.floor(age.age_days);
  if (age.state === 'expired')
    out.info(
      `umbra: warning: ${l.kind}/${l.provider} is ${days} days old (a ${l.kind} list counts for ${rule.expire_days}): expired, it ` +
        'says nothing; import a current one',
    );
  else if (age.state === 'stale')
    out.info(
      `umbra: warning: ${l.kind}/${l.provider} is ${days} days old (full strength for ${rule.fresh_days}): stale, it counts at ` +
        `${Math.round(age.strength * 100) / 100}`,
    );
  if (l.published_from === 'import')
    out.info(`umbra: note: ${l.kind}/${l.provider} has no publisher's time; it ages from its import (give --published)`);
}

const PUBLISHED_TEXT: Record<ImportSummary['published_from'], string> = {
  content: "the file's own time",
  option: 'as given by --published',
  'file-date': "the file's modification date",
  import: 'no time known: the import time; give --published',
};

function report(out: Output, s: ImportSummary): void {
  out.result(s, () => {
    const lines = [
      s.stored
        ? `${s.kind}/${s.provider}: ${s.count} ranges from ${s.entries} entries (${s.format}), version ` +
          `${s.version}${s.replaced ? `, replacing ${s.replaced}` : ''}`
        : `${s.kind}/${s.provider}: no valid range in ${s.entries} entries (${s.format}); nothing stored`,
    ];
    if (s.stored) {
      const age = listAge(s, Math.floor(systemClock.now() / 1000));
      lines.push(
        `  published ${new Date(s.published_at * 1000).toISOString()} (${PUBLISHED_TEXT[s.published_from]}): ${Math.floor(age.age_days)} ` +
          `days old, ${age.state}${age.state === 'stale' ? ` (counts at ${Math.round(age.strength * 100) / 100})` : ''}` +
          `${age.state === 'expired' ? ': it says nothing until a current list replaces it' : ''}`,
      );
    }
    if (s.sections) {
      const { imported, available } = s.sections;
      lines.push(
        imported.length === available.length
          ? `  sections: all ${available.length}`
          : `  sections: ${imported.join(', ')} (of ${available.join(', ')})`,
      );
    }
    if (s.rejected > 0) lines.push(`  ${s.rejected} rejected:`);
    for (const e of s.errors) lines.push(`  line ${e.line}: ${e.entry}: ${e.reason}`);
    if (s.rejected > s.errors.length) lines.push(`  … and ${s.rejected - s.errors.length} more`);
    if (s.normalised > 0) lines.push(`  ${s.normalised} with host bits set, stored as their network:`);
    for (const e of s.notes) lines.push(`  line ${e.line}: ${e.reason}`);
    if (s.normalised > s.notes.length) lines.push(`  … and ${s.normalised - s.notes.length} more`);
    return lines.join('\n');
  });
}

/** The configured list store for one verb, closed after it. */
async function withListStore<T>(config: Config, use: (store: IntelListStore) => Promise<T>): Promise<T> {
  const lists = createListStore(config);
  try {
    return await use(lists.store);
  } finally {
    await lists.close();
  }
}
