import { AppError } from '../../errors.ts';
import type { Clock } from '../../lib/clock.ts';
import { isPromise, type MaybePromise } from '../../lib/maybe-promise.ts';
import type { Caller } from '../accounts/account-service.ts';
import type { CreditLedger, DebitResult } from '../credits/credit-ledger.ts';
import { MAX_BATCH, planBatch, type BatchPlan } from './batch.ts';
import { isAnycast } from './anycast.ts';
import { isIndexed, type IndexedIpDataset } from './ip-dataset.ts';
import { PackedBatch } from './packed-batch.ts';
import { recordJson } from '../../lib/record-json.ts';
import { HonestLocations, isBogon, type AnsweredLocation, type AnsweredNetwork, type EmbeddedIpv4 } from './honest-location.ts';
import type { LookupData, LookupView } from './lookup-data.ts';
import { isExplaining, type Evidence, type Intelligence, type IntelligenceSource } from './intelligence.ts';
import { carriedIpv4, parseIp, type ParsedIp } from '../../lib/ip-address.ts';

export interface IpResult {
  ip: string;
  network: AnsweredNetwork;
  location: AnsweredLocation;
  intelligence: Intelligence;
  /** Only for 6to4, Teredo and NAT64 addresses: the IPv4 address they carry, which network and location describe. */
  embedded_ipv4?: EmbeddedIpv4;
  /** Only with explain=true: a top-level member of the IP result. */
  evidence?: Evidence;
}

export interface Billed<T> {
  value: T;
  /** The data version the answer comes from (X-Data-Version), for operations that read the IP data. */
  dataVersion?: string;
  /** Team balance after the charge (X-Credits-Remaining). */
  creditsRemaining: number;
  charged: number;
}

/**
 * Charges a lookup atomically before doing it, and refunds it if the lookup then fails, so a failed
 * request is never charged and a request the balance cannot cover gets 402 with nothing charged.
 * Synchronous (returns or throws at once) when the ledger answers from memory.
 */
export function charge<T>(ledger: CreditLedger, clock: Clock, orgId: string, cost: number, work: () => T): MaybePromise<Billed<T>> {
  const debit = ledger.debit(orgId, cost, Math.floor(clock.now() / 1000));
  return isPromise(debit) ? debit.then((d) => afterDebit(ledger, d, orgId, cost, work)) : afterDebit(ledger, debit, orgId, cost, work);
}

function afterDebit<T>(ledger: CreditLedger, debit: DebitResult, orgId: string, cost: number, work: () => T): MaybePromise<Billed<T>> {
  if (!debit.ok) {
    throw new AppError(
      'CREDITS_EXHAUSTED',
      `Lookup credits exhausted: this request costs ${cost} credit${cost === 1 ? '' : 's'} and the team balance is ${debit.balance}. ` +
        `Credits refill at the end of the billing period; see /account/me.`,
    );
  }
  try {
    return { value: work(), creditsRemaining: debit.balance, charged: cost };
  } catch (e) {
    return ledger.refund(orgId, cost).then(() => Promise.reject(e));
  }
}

export class LookupService {
  private readonly honest = new HonestLocations();

  constructor(
    private readonly data: LookupData,
    private readonly intel: IntelligenceSource,
    private readonly ledger: CreditLedger,
    private readonly clock: Clock,
  ) {}

  /** `orgId`: the caller's team, for its intelligence overlays. `view`: the data to answer from (one per request). */
  resolve(ip: ParsedIp, orgId?: string, view: LookupView = this.data.view()): IpResult {
    // Nearly every address carries none: its answer is one object literal of one shape, so the
    // serializers that read it stay monomorphic (docs/intelligence.md, "Compared with an MMDB reader").
    if (carriedIpv4(ip)) return this.resolveCarried(ip, orgId, view);
    const network = this.honest.answerNetwork(view.network(ip), ip);
    return {
      ip: ip.text,
      network,
      location: this.honest.answerLocation(view.dataset.location(ip), network),
      intelligence: this.intel.intelligence(ip, orgId, network.type),
    };
  }

  /**
   * A 6to4, Teredo or NAT64 address: network and location are those of the IPv4 address it carries
   * (HonestLocations); the intelligence stays the asked address's own, since lists and feeds name the
   * addresses they saw (its risk prior comes from the network answered).
   */
  private resolveCarried(ip: ParsedIp, orgId: string | undefined, view: LookupView): IpResult {
    const at = this.honest.target(ip);
    const network = this.honest.answerNetwork(view.network(at), at);
    return {
      ip: ip.text,
      network,
      location: this.honest.answerLocation(view.dataset.location(at), network),
      intelligence: this.intel.intelligence(ip, orgId, network.type),
      embedded_ipv4: this.honest.embedded(ip),
    };
  }

  /** The result with its evidence; a source that cannot explain gives empty evidence. */
  private explained(ip: ParsedIp, orgId: string, view: LookupView): IpResult {
    const at = this.honest.target(ip);
    const network = this.honest.answerNetwork(view.network(at), at);
    const { intelligence, evidence } = isExplaining(this.intel)
      ? this.intel.explain(ip, orgId, network.type)
      : { intelligence: this.intel.intelligence(ip, orgId, network.type), evidence: undefined };
    const result: IpResult = {
      ip: ip.text,
      network,
      location: this.honest.answerLocation(view.dataset.location(at), network),
      intelligence,
      evidence: { network: view.networkEvidence(at), ...(evidence ?? emptyEvidence(intelligence.risk_score)) },
    };
    if (at !== ip) result.embedded_ipv4 = this.honest.embedded(ip);
    return result;
  }

  /** Synchronous on the in-memory ledger's fast path; throws AppError for a bad address. Explaining costs the same. */
  lookupIp(caller: Caller, input: string, options?: { explain?: boolean }): MaybePromise<Billed<IpResult>> {
    const ip = parseIp(input);
    if (!ip) throw AppError.field('ip_address', 'must be a single IPv4 or IPv6 address (no zone id, no CIDR)');
    const explain = options?.explain === true;
    return this.chargeOnView(caller.orgId, 1, (view) =>
      explain ? this.explained(ip, caller.orgId, view) : this.resolve(ip, caller.orgId, view),
    );
  }

  async lookupIps(caller: Caller, ips: unknown): Promise<Billed<{ results: IpResult[]; invalid: string[] }>> {
    const plan = checkedPlan(ips);
    return this.chargeOnView(caller.orgId, plan.cost, (view) => ({
      results: plan.addresses.map((ip) => this.resolve(ip, caller.orgId, view)),
      invalid: plan.invalid,
    }));
  }

  /**
   * lookupIps for an answer written as JSON: the same checks, charge and results, given as a
   * PackedBatch when the data allows (an indexed dataset, no network list overriding it), where
   * most addresses' results are the handles of their records' JSON; else as lookupIps gives them.
   */
  async lookupIpsPacked(caller: Caller, ips: unknown): Promise<Billed<PackedBatch<IpResult> | { results: IpResult[]; invalid: string[] }>> {
    const plan = checkedPlan(ips);
    return this.chargeOnView(caller.orgId, plan.cost, (view) =>
      !view.overridden && isIndexed(view.dataset)
        ? this.packed(plan.addresses, plan.invalid, caller.orgId, view, view.dataset)
        : { results: plan.addresses.map((ip) => this.resolve(ip, caller.orgId, view)), invalid: plan.invalid },
    );
  }

  /**
   * An address's result is its records' JSON and its type's prior exactly when resolve() would answer
   * the dataset's own records: in a network range with an ASN (not bogon), not reserved, not anycast
   * (the record's flags then say so, HonestLocations.answerNetwork), not carrying an IPv4 address,
   * with a location range (a loaded location record is already answered, HonestLocations.answerLocation),
   * and an intelligence that carries its JSON (the shared prior-only answers). Each stage runs over the
   * whole batch before the next (record numbers, then handles), so memory waits overlap.
   */
  private packed(addresses: ParsedIp[], invalid: string[], orgId: string, view: LookupView, ds: IndexedIpDataset): PackedBatch<IpResult> {
    const n = addresses.length;
    const net = new Int32Array(n);
    const loc = new Int32Array(n);
    ds.recordIndexes(addresses, net, loc);
    // The ASN of every address's network record, one read each, before anything needs them.
    const asns = new Float64Array(n);
    for (let k = 0; k < n; k++) if (net[k]! >= 0) asns[k] = ds.networkAsn(net[k]!);
    const results = new Array<IpResult | undefined>(n).fill(undefined);
    const intelligence = new Array<Intelligence | undefined>(n).fill(undefined);
    for (let k = 0; k < n; k++) {
      const ip = addresses[k]!;
      const ni = net[k]!;
      const asn = asns[k]!;
      // HonestLocations.answerNetwork's rules: neither flag set, so the record is answered as it is.
      if (ni < 0 || loc[k]! < 0 || carriedIpv4(ip) || isBogon(ip, asn) || isAnycast(ip, asn)) continue;
      const intel = this.intel.intelligence(ip, orgId, ds.networkType(ni));
      if (recordJson(intel) === undefined) continue;
      intelligence[k] = intel;
    }
    // The handles of the plain results' JSON (made on first use); 0 in `net` marks a result given as an object.
    for (let k = 0; k < n; k++) {
      if (intelligence[k] === undefined) {
        net[k] = 0;
        continue;
      }
      const nh = ds.networkJson(net[k]!);
      const lh = ds.locationJson(loc[k]!);
      if (nh === 0 || lh === 0) {
        net[k] = 0;
        intelligence[k] = undefined;
        continue;
      }
      net[k] = nh;
      loc[k] = lh;
    }
    for (let k = 0; k < n; k++) if (net[k] === 0) results[k] = this.resolve(addresses[k]!, orgId, view);
    return new PackedBatch(addresses, results, net, loc, intelligence, ds.json, invalid);
  }

  /**
   * Charges, then answers from the current view, and says which data version that was. The view is
   * taken inside the charged work, after any wait for the ledger, and used at once: a swapped-out
   * dataset's memory is reused by the load after next (DatasetLoader), so no lookup may hold one.
   */
  private chargeOnView<T>(orgId: string, cost: number, work: (view: LookupView) => T): MaybePromise<Billed<T>> {
    let version: string | undefined;
    const billed = charge(this.ledger, this.clock, orgId, cost, () => {
      const view = this.data.view();
      version = view.version.header;
      return work(view);
    });
    return isPromise(billed) ? billed.then((b) => withVersion(b, version)) : withVersion(billed, version);
  }
}

/** A batch's input checked and planned (lookupIps): AppError for what no batch can be. */
function checkedPlan(ips: unknown): BatchPlan {
  if (!Array.isArray(ips) || ips.some((x) => typeof x !== 'string')) {
    throw AppError.field('ips', 'must be an array of strings');
  }
  // Worded as the HTTP schema's maxItems check words it, so gRPC (which has no schema) says the same.
  if (ips.length > MAX_BATCH) throw AppError.field('ips', `must have at most ${MAX_BATCH} items`);
  const plan = planBatch(ips as string[]);
  if (plan.addresses.length === 0) throw AppError.field('ips', 'must contain at least one valid IPv4 or IPv6 address');
  return plan;
}

function withVersion<T>(billed: Billed<T>, version: string | undefined): Billed<T> {
  billed.dataVersion = version;
  return billed;
}

function emptyEvidence(score: number): Evidence {
  return {
    categories: [],
    providers: [],
    behavior: [],
    devices: [],
    risk: {
      score,
      prior: { value: 0, from: null },
      category: { value: 0, from: null },
      behavior: { value: 0, from: null },
      volume: { value: 0, observations: 0 },
      diversity: { value: 1, behaviors: 0 },
      shared: { value: 1, from: null },
      evidence: 0,
      benign_cap: false,
    },
  };
}
