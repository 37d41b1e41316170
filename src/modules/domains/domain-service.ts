import { AppError } from '../../errors.ts';
import type { Clock } from '../../lib/clock.ts';
import type { Caller } from '../accounts/account-service.ts';
import type { CreditLedger } from '../credits/credit-ledger.ts';
import { charge, type Billed } from '../lookup/lookup-service.ts';
import { normalizeDomain } from '../../lib/domain-name.ts';
import type { DomainData, DomainIntelSource } from './domain-source.ts';

export const DEFAULT_RECENT = 50;
export const MAX_RECENT = 1000;

export interface DomainResult {
  type: 'domain';
  data: DomainData;
}

export class DomainService {
  constructor(
    private readonly source: DomainIntelSource,
    private readonly ledger: CreditLedger,
    private readonly clock: Clock,
  ) {}

  /** limit: recent_events cap, 1..1000, default 50, larger clamped. */
  async lookup(caller: Caller, input: string, limit: number | undefined): Promise<Billed<DomainResult>> {
    const name = normalizeDomain(input);
    if (!name.ok) throw AppError.field('domain', name.message);
    // Worded as the HTTP query schema's check words it (http/problem.ts), so gRPC says the same.
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw AppError.field('limit', 'must be an integer of at least 1');
    const cap = Math.min(limit ?? DEFAULT_RECENT, MAX_RECENT);
    return charge(this.ledger, this.clock, caller.orgId, 1, () => ({
      type: 'domain' as const,
      data: this.source.summary(name.domain, this.clock.now(), cap),
    }));
  }
}
