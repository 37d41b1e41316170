/** BASIC plus the 16 feed scopes (docs/contract.md). Matched exactly (case-sensitive). */
export const SCOPES = [
  'BASIC',
  'PROXY_FEEDS',
  'PROXY_FIREHOSE',
  'ANONYMIZERS_FEED',
  'ANONYMIZERS_STREAM',
  'TORRENTS_FEED',
  'TORRENTS_STREAM',
  'HONEYPOT_HTTP_FEED',
  'HONEYPOT_HTTP_STREAM',
  'HONEYPOT_HTTPS_FEED',
  'HONEYPOT_HTTPS_STREAM',
  'HONEYPOT_DNS_FEED',
  'HONEYPOT_DNS_STREAM',
  'HONEYPOT_ADB_FEED',
  'HONEYPOT_ADB_STREAM',
  'JA4T_FEED',
  'JA4T_STREAM',
] as const;

export type Scope = (typeof SCOPES)[number];

const SCOPE_SET: ReadonlySet<string> = new Set(SCOPES);

export const isScope = (s: string): s is Scope => SCOPE_SET.has(s);

/** Splits a comma list of scope names; returns the unknown ones so callers can refuse them all at once. */
export function parseScopeList(text: string): { scopes: Scope[]; unknown: string[] } {
  const scopes: Scope[] = [];
  const unknown: string[] = [];
  for (const raw of text.split(',')) {
    const name = raw.trim();
    if (name === '') continue;
    if (isScope(name)) {
      if (!scopes.includes(name)) scopes.push(name);
    } else unknown.push(name);
  }
  return { scopes, unknown };
}

export const RELATIONS = ['OWNER', 'ADMIN', 'MEMBER'] as const;
export type Relation = (typeof RELATIONS)[number];
