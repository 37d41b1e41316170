/**
 * Imported IP range lists (Tor exits, crawler and service ranges, relay egress, VPN ranges, cloud
 * ranges). The importers turn a publisher's file into an IntelList; the intelligence index reads
 * every stored list. A list is versioned by the hash of the imported content and its import time.
 */
/** content: the file's own header; option: given at import; file-date: the file's modification time; import: none known. */
export const PUBLISHED_FROM = ['content', 'option', 'file-date', 'import'] as const;
export type PublishedFrom = (typeof PUBLISHED_FROM)[number];

export interface IntelList {
  /**
   * Upper-case kind: a category value of the contract (TOR_NODE, SEARCH_ENGINE, PRIVATE_RELAY, ...),
   * or a network.type value (DATACENTER, ...) for lists that classify networks rather than flag them.
   */
  kind: string;
  /** Upper-case provider tag (GOOGLEBOT, TOR, AWS, APPLE_PRIVATE_RELAY). */
  provider: string;
  /** Lower-case hex SHA-256 of the imported file, first 16 characters. */
  version: string;
  /** Unix seconds of the import. */
  imported_at: number;
  /**
   * Unix seconds of the publisher's own time for this snapshot: the file's header (`creationTime`,
   * `syncToken`, `createDate`, `modified`, the Tor dates), else the time the importer was given
   * (`--published`), else the file's modification date, else the import time. Lists age from it
   * (list-aging.ts).
   */
  published_at: number;
  /** Where published_at comes from. */
  published_from: PublishedFrom;
  /** Detected publisher format, e.g. `cidr-lines`, `tor-bulk-exit-list`, `google-prefixes`. */
  format: string;
  /** Canonical CIDR strings, IPv4 and IPv6 (single addresses as /32 or /128), sorted, deduplicated. */
  cidrs: string[];
}

/** Where imported lists are kept. Re-importing a kind with the same provider replaces that list. */
export interface IntelListStore {
  put(list: IntelList): Promise<void>;
  /** True when a list was removed. */
  remove(kind: string, provider: string): Promise<boolean>;
  all(): Promise<IntelList[]>;
  /**
   * Changes whenever a list is put or removed, also by another process (the CLI imports while the
   * server runs); cheap enough to poll every few seconds.
   */
  revision(): Promise<string>;
}
