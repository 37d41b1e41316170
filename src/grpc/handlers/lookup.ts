import { OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { domainToProto, ipResultToProto } from '../mappers.ts';
import { billedOutcome, unary, type CallContext } from '../unary.ts';

/** LookupIP ↔ GET /lookup/ip/{ip_address}?explain=: the same module call, billed the same way. */
export const lookupIp = (ctx: CallContext, s: Services) =>
  unary<{ ip_address?: string; explain?: boolean }, unknown>(
    ctx,
    () => OPERATIONS.lookupIp,
    (caller, req) => billedOutcome(s.lookup.lookupIp(caller, req.ip_address ?? '', { explain: req.explain === true }), ipResultToProto),
  );

/** LookupIPs ↔ POST /lookup/ips. */
export const lookupIps = (ctx: CallContext, s: Services) =>
  unary<{ ips?: string[] }, unknown>(
    ctx,
    () => OPERATIONS.lookupIps,
    async (caller, req) =>
      billedOutcome(await s.lookup.lookupIps(caller, req.ips ?? []), (v) => ({
        results: v.results.map(ipResultToProto),
        invalid: v.invalid,
      })),
  );

/** LookupDomain ↔ GET /lookup/domain/{domain}?limit=. */
export const lookupDomain = (ctx: CallContext, s: Services) =>
  unary<{ domain?: string; limit?: number }, unknown>(
    ctx,
    () => OPERATIONS.lookupDomain,
    async (caller, req) => billedOutcome(await s.domains.lookup(caller, req.domain ?? '', req.limit), domainToProto),
  );
