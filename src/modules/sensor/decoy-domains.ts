import { normalizeDomain } from '../../lib/domain-name.ts';

/**
 * Which decoy domain a name an attacker sent (an HTTP Host, a TLS SNI, a DNS question) falls under.
 * Records are filed under one of the sensor's own decoy domains, never under a name the attacker made
 * up: that keeps domain intelligence about the domains the operator runs, and an attacker cannot
 * create lookup keys at will.
 */
export class DecoyDomains {
  private readonly set: ReadonlySet<string>;

  /** `domains` are normalised (lower-case Punycode) and not empty; the first is the default. */
  constructor(private readonly domains: readonly string[]) {
    this.set = new Set(domains);
  }

  /** The decoy domain `name` is or falls under (its port and trailing dot ignored), else the first one. */
  domainOf(name: string | undefined): string {
    return this.match(name)?.domain ?? this.domains[0]!;
  }

  /**
   * The name a TLS certificate is made for: the name itself (normalised) when it is or falls under a
   * decoy domain, else the first decoy domain.
   */
  certificateName(name: string | undefined | null): string {
    return this.match(name ?? undefined)?.name ?? this.domains[0]!;
  }

  /**
   * The decoy domain a DNS question name falls under, by its labels alone: DNS names may carry labels
   * a host name may not (`_dmarc`, `_sip._tcp`), so they are not normalised as host names are.
   */
  zoneOf(qname: string): string | undefined {
    let candidate = qname.toLowerCase().replace(/\.$/, '');
    for (;;) {
      if (this.set.has(candidate)) return candidate;
      const dot = candidate.indexOf('.');
      if (dot < 0) return undefined;
      candidate = candidate.slice(dot + 1);
    }
  }

  private match(name: string | undefined): { name: string; domain: string } | undefined {
    if (name) {
      const host = stripPort(name.trim());
      const d = normalizeDomain(host);
      if (d.ok) {
        let candidate = d.domain;
        for (;;) {
          if (this.set.has(candidate)) return { name: d.domain, domain: candidate };
          const dot = candidate.indexOf('.');
          if (dot < 0) break;
          candidate = candidate.slice(dot + 1);
        }
      }
    }
    return undefined;
  }
}

/** `example.com:8080` -> `example.com`; a bracketed IPv6 literal or a bare name stays as it is. */
function stripPort(host: string): string {
  if (host.startsWith('[')) return host;
  const colon = host.lastIndexOf(':');
  return colon > 0 && host.indexOf(':') === colon ? host.slice(0, colon) : host;
}
