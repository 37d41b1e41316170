import type { Clock } from '../../../lib/clock.ts';
import type { IntelList, IntelListStore, PublishedFrom } from './intel-list.ts';
import { LIST_KINDS, listKind, PROVIDER_TAG_RULE, providerTag } from './list-kinds.ts';
import { ListFormatError, parseList, type LineProblem, type ListFormat, type ParsedList } from './list-formats.ts';

/** Lower-case hex SHA-256 of the bytes (injected: the domain takes no crypto driver). */
export type Sha256 = (bytes: Buffer) => string;

export interface ImportRequest {
  kind: string;
  /** Provider tag; defaults from the format where the format names its publisher (Tor, AWS, ...). */
  provider?: string;
  bytes: Buffer;
  /** Sections of multi-section files (AWS services, Datadog sections, ...); `all` for every one. */
  sections?: string[];
  /**
   * The publisher's time when the caller knows it (Unix seconds): `option` as given by the user, which
   * wins over the file's own header; `file-date` the file's modification time, used only when the
   * file carries no time of its own.
   */
  published?: { at: number; from: 'option' | 'file-date' };
}

/** How far ahead of the clock a given publication time may lie (clock skew between machines). */
const MAX_AHEAD_S = 86_400;

/** How many problems a summary lists; the counts are always complete. */
export const MAX_LISTED = 100;

export interface ImportSummary {
  kind: string;
  provider: string;
  format: ListFormat;
  version: string;
  imported_at: number;
  published_at: number;
  published_from: PublishedFrom;
  /** Ranges stored (canonical, deduplicated). */
  count: number;
  entries: number;
  rejected: number;
  /** The first MAX_LISTED rejected entries, by line. */
  errors: LineProblem[];
  normalised: number;
  notes: LineProblem[];
  sections?: ParsedList['sections'];
  /** The version this import replaced, when the kind and provider had a list. */
  replaced: string | null;
  /** False when no valid range was found: nothing was stored. */
  stored: boolean;
}

/** A refusal before any work (unknown kind, bad provider, unreadable format): exit 2, nothing stored. */
export class ListImportError extends Error {}

/** Provider tags implied by formats that only one publisher uses. */
const FORMAT_PROVIDER: Partial<Record<ListFormat, string>> = {
  'tor-exit-addresses': 'TOR',
  'tor-bulk-exit-list': 'TOR',
  'aws-ip-ranges': 'AWS',
  'gcp-cloud-json': 'GOOGLE_CLOUD',
  'azure-service-tags': 'AZURE',
  'cloudflare-api': 'CLOUDFLARE',
  'datadog-ip-ranges': 'DATADOG',
  'stripe-ips': 'STRIPE',
  'github-meta': 'GITHUB',
};

/** Turns a publisher's file into a stored IntelList; re-importing a kind and provider replaces that list. */
export class ListImporter {
  constructor(
    private readonly store: IntelListStore,
    private readonly clock: Clock,
    private readonly sha256: Sha256,
  ) {}

  async import(req: ImportRequest): Promise<ImportSummary> {
    const kind = listKind(req.kind);
    if (!kind) throw new ListImportError(`unknown list kind '${req.kind}'; one of ${LIST_KINDS.join(', ')}`);
    let provider: string | undefined;
    if (req.provider !== undefined) {
      provider = providerTag(req.provider);
      if (!provider) throw new ListImportError(`bad provider tag '${req.provider}': ${PROVIDER_TAG_RULE}`);
    }
    const nowS = Math.floor(this.clock.now() / 1000);
    const inRange = (t: number) => Number.isInteger(t) && t >= 946_684_800 && t <= nowS + MAX_AHEAD_S;
    let given = req.published;
    if (given?.from === 'option' && !inRange(given.at))
      throw new ListImportError(`bad publication time ${given.at}: Unix seconds from the year 2000 up to now`);
    // A file date out of range (a clock reset, a future date) says nothing: the file is treated as undated.
    if (given && !inRange(given.at)) given = undefined;
    let parsed: ParsedList;
    try {
      parsed = parseList(req.bytes, { kind, sections: req.sections });
    } catch (e) {
      if (e instanceof ListFormatError) throw new ListImportError(e.message);
      throw e;
    }
    provider ??= FORMAT_PROVIDER[parsed.format];
    if (!provider)
      throw new ListImportError(
        `a ${parsed.format} file does not name its publisher: give --provider TAG (e.g. GOOGLEBOT, BINGBOT, OPENAI)`,
      );
    const [published_at, published_from]: [number, PublishedFrom] =
      given?.from === 'option'
        ? [given.at, 'option']
        : parsed.published_at !== undefined
          ? [parsed.published_at, 'content']
          : given
            ? [given.at, 'file-date']
            : [nowS, 'import'];
    const list: IntelList = {
      kind,
      provider,
      version: this.sha256(req.bytes).slice(0, 16),
      imported_at: nowS,
      published_at,
      published_from,
      format: parsed.format,
      cidrs: parsed.cidrs.map((c) => c.text),
    };
    const stored = list.cidrs.length > 0;
    let replaced: string | null = null;
    if (stored) {
      replaced = (await this.store.all()).find((l) => l.kind === kind && l.provider === provider)?.version ?? null;
      await this.store.put(list);
    }
    return {
      kind,
      provider,
      format: parsed.format,
      version: list.version,
      imported_at: list.imported_at,
      published_at,
      published_from,
      count: list.cidrs.length,
      entries: parsed.entries,
      rejected: parsed.rejected.length,
      errors: parsed.rejected.slice(0, MAX_LISTED),
      normalised: parsed.normalised.length,
      notes: parsed.normalised.slice(0, MAX_LISTED),
      ...(parsed.sections ? { sections: parsed.sections } : {}),
      replaced,
      stored,
    };
  }
}
