import type { ByteArena } from '../../lib/byte-arena.ts';
import type { ParsedIp } from '../../lib/ip-address.ts';
import type { Intelligence } from './intelligence.ts';

/**
 * A batch lookup's results as a JSON answer needs them (LookupService.lookupIpsPacked): the same
 * results as lookupIps, in the same order, but an address whose result is nothing more than its
 * records and its network type's prior (most of them) is given as the handles of its records' JSON
 * in `json` and its intelligence, not as an IpResult: writing its answer is then three copies of
 * bytes made once (docs/architecture.md, "The batch answer"). Any other address (in no range,
 * bogon, anycast, carrying an IPv4 address, known to the intelligence, ...) has its IpResult.
 */
export class PackedBatch<Result = unknown> {
  constructor(
    /** The unique valid addresses, in the order of their first appearance (as lookupIps). */
    readonly addresses: readonly ParsedIp[],
    /** results[k]: the result (IpResult) of addresses[k], or undefined when it is given by handles. */
    readonly results: ReadonlyArray<Result | undefined>,
    /** Handles in `json` of the network's and the location's JSON, where results[k] is undefined. */
    readonly network: Int32Array,
    readonly location: Int32Array,
    /** The intelligence (one carrying its JSON, lib/record-json.ts), where results[k] is undefined. */
    readonly intelligence: ReadonlyArray<Intelligence | undefined>,
    readonly json: ByteArena,
    /** Rejected inputs, each once, in input order. */
    readonly invalid: readonly string[],
  ) {}

  /** How many results (addresses) the batch answers. */
  get count(): number {
    return this.addresses.length;
  }
}
