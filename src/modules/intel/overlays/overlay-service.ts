import { AppError } from '../../../errors.ts';
import type { Clock } from '../../../lib/clock.ts';
import type { AccountStore } from '../../accounts/account-store.ts';
import { formatV4, formatV6, parseIp } from '../../../lib/ip-address.ts';
import { cidrBounds } from '../engine/range-sets.ts';
import { CATEGORY_KINDS, PROVIDER_TAG_RULE, providerTag } from '../lists/list-kinds.ts';
import type { Overlay, OverlayStore } from './overlay-store.ts';

/** `CAT`, `cat`, `tor-node` → `TOR_NODE` (as `umbra data import-list` reads kinds). */
export const normaliseTag = (s: string): string => s.trim().toUpperCase().replace(/-/g, '_');

/** Canonical CIDR (host bits cleared, RFC 5952), or undefined. A bare address is a /32 or /128. */
export function canonicalCidr(text: string): string | undefined {
  const b = cidrBounds(text.trim(), parseIp);
  if (!b) return undefined;
  const slash = text.indexOf('/');
  const bits = b.version === 4 ? 32 : 128;
  const len = slash < 0 ? bits : Number(text.slice(slash + 1));
  if (b.version === 4) return `${formatV4(b.start)}/${len}`;
  const words = new Uint32Array(4);
  for (let k = 0; k < 4; k++) words[k] = Number((b.start >> BigInt(96 - 32 * k)) & 0xffffffffn);
  return `${formatV6(words)}/${len}`;
}

/** Operator verbs on per-team overlays; validates every input before it reaches the store. */
export class OverlayService {
  constructor(
    private readonly store: OverlayStore,
    private readonly accounts: AccountStore,
    private readonly clock: Clock,
  ) {}

  private async orgId(idOrName: string): Promise<string> {
    const org = await this.accounts.findOrg(idOrName);
    if (!org) throw new AppError('NOT_FOUND', `No organization with id or name '${idOrName}'.`);
    return org.id;
  }

  async add(input: { org: string; cidr: string; category: string; provider?: string; action: 'allow' | 'deny' }): Promise<Overlay> {
    const cidr = canonicalCidr(input.cidr);
    if (!cidr) throw AppError.field('cidr', `must be an IPv4 or IPv6 address or CIDR, got '${input.cidr}'`);
    // Only the contract's categories: an overlay of any other value would never match what lookups report.
    const category = normaliseTag(input.category);
    if (!(CATEGORY_KINDS as readonly string[]).includes(category))
      throw AppError.field('category', `'${input.category.slice(0, 64)}' is not a category; one of ${CATEGORY_KINDS.join(', ')}`);
    // The form of the lists' provider tags, so that an allow overlay can name the provider a list attributes.
    const provider = input.provider === undefined ? null : (providerTag(input.provider) ?? null);
    if (input.provider !== undefined && provider === null)
      throw AppError.field('provider', `'${input.provider.slice(0, 80)}' is not a provider tag: ${PROVIDER_TAG_RULE}`);
    return this.store.add({
      org_id: await this.orgId(input.org),
      cidr,
      category,
      provider,
      action: input.action,
      created_at: Math.floor(this.clock.now() / 1000),
    });
  }

  async list(org: string): Promise<Overlay[]> {
    return this.store.list(await this.orgId(org));
  }

  async clear(org: string, cidrText?: string): Promise<number> {
    const cidr = cidrText === undefined ? undefined : canonicalCidr(cidrText);
    if (cidrText !== undefined && !cidr) throw AppError.field('cidr', `must be an IPv4 or IPv6 address or CIDR, got '${cidrText}'`);
    return this.store.clear(await this.orgId(org), cidr);
  }
}
