import type { FeedMessage } from '../feeds/feed-bus.ts';
import type { FeedDef } from '../feeds/feed-catalog.ts';
import type { FeedObserver } from '../feeds/ingest-service.ts';
import type { DomainAggregates } from './domain-aggregates.ts';

/** ASN and country of a source address, for the top_asn and geo_distribution extras. */
export type SourceLookup = (ip: string) => { asn: number; country: string } | undefined;

/**
 * Feeds honeypot http, https and dns records into the domain aggregates. A DNS qname below the
 * tunnel's domain is counted as its subdomain (see HoneypotDomainEvent.subdomain).
 */
export function domainFeedObserver(aggregates: DomainAggregates, lookup: SourceLookup): FeedObserver {
  return (feed: FeedDef, messages: readonly FeedMessage[]) => {
    if (!feed.domainEvents) return;
    for (const { record } of messages) {
      const domain = record.domain as string;
      const qname = record.qname as string | undefined;
      const sourceIp = (record.source_ip as string | undefined) ?? '';
      const where = sourceIp ? lookup(sourceIp) : undefined;
      aggregates.add({
        timestampMs: record.timestamp, // the three honeypot feeds stamp in ms
        domain,
        subdomain: qname?.endsWith(`.${domain}`) ? qname : undefined,
        port: record.port as number,
        sourceIp,
        asn: where?.asn || undefined,
        country: where?.country || undefined,
        ...(record.simulated === true ? { simulated: true as const } : {}),
      });
    }
  };
}
