/**
 * Per-team allow and deny overlays: an operator's correction of the intelligence for one team's
 * lookups only. `deny` adds the category (with the provider when given) to every address in the CIDR;
 * `allow` removes it (only that provider's attribution when a provider is given).
 */
export interface Overlay {
  id: number;
  org_id: string;
  /** Canonical CIDR. */
  cidr: string;
  /** Upper-case category value, e.g. TOR_NODE, SEARCH_ENGINE. */
  category: string;
  provider: string | null;
  action: 'allow' | 'deny';
  /** Unix seconds. */
  created_at: number;
}

export type NewOverlay = Omit<Overlay, 'id'>;

/** Where overlays are kept; the server polls revision() so a change from the CLI applies within seconds. */
export interface OverlayStore {
  add(overlay: NewOverlay): Promise<Overlay>;
  /** One team's overlays, oldest first. */
  list(orgId: string): Promise<Overlay[]>;
  /** Removes a team's overlays (only those of the CIDR when given); returns how many went. */
  clear(orgId: string, cidr?: string): Promise<number>;
  all(): Promise<Overlay[]>;
  /** Changes with every add and clear, also by another process. */
  revision(): Promise<string>;
}
