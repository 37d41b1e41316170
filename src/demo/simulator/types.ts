export { FEED_IDS, type FeedId } from '../../modules/feeds/feed-catalog.ts';

/** Uniform in [0, 1). Injected so that tests (and the demo backfill) are reproducible. */
export type Rng = () => number;

export interface NetworkInfo {
  asn: number;
  country: string;
}

export interface TlsHello {
  raw: Uint8Array;
  /** The ClientHello `details` of docs/feeds.md, or null when the builder's own parser rejects it. */
  details: object | null;
}

/** What the generators need from the rest of umbra. */
export interface SimulatorDeps {
  rng: Rng;
  /** ASN and country of an address from umbra's IP dataset, so feed records agree with lookups. */
  network(ip: string): NetworkInfo;
  /** Builds a ClientHello for the SNI (null: no SNI extension, as IP scanners send). */
  tlsHello(rng: Rng, sni: string | null): TlsHello;
}

/** One record for the timestamp tsMs (ms); each generator converts to its feed's unit. */
export type RecordGenerator = (tsMs: number) => object;
