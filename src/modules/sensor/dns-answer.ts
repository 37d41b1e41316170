import * as dnsPacket from 'dns-packet';
import { parseIp } from '../../lib/ip-address.ts';

/**
 * What the DNS listener answers, decided from the query bytes alone (dns-packet decodes them; its
 * name decoder refuses compression pointers that do not point backwards, so a pointer loop is an
 * error, not a hang). The answer is never larger than the query times `maxFactor`: a bigger one is
 * replaced by an empty answer with the TC bit (a real resolver then asks again over TCP, where a
 * spoofed source cannot), so the listener cannot amplify a reflection attack. The answer's name is a
 * pointer to the question's (2 bytes, not the name again): dns-packet does not compress, and without
 * it every AAAA answer to a query without EDNS was over twice its query, so truncated.
 */

export interface DnsAnswerOptions {
  mode: 'nxdomain' | 'decoy';
  /** Decoy addresses for A and AAAA questions under a decoy domain (mode decoy). */
  ipv4?: string;
  ipv6?: string;
  ttl: number;
  /** Response bytes at most this many times the query's (UDP only; TCP answers are not reflected). */
  maxFactor: number;
  /** Whether the name falls under a decoy domain (only those get decoy answers). */
  isDecoy: (qname: string) => boolean;
}

export interface DnsOutcome {
  /** The question as recorded: lower-case name without the trailing dot ('.' for the root), type name. */
  qname: string;
  qtype: string;
  /** The bytes to send back; undefined when nothing is sent (a response packet, not a query). */
  response: Buffer | undefined;
  rcode: 'NOERROR' | 'NXDOMAIN' | 'REFUSED' | 'FORMERR' | 'NOTIMP';
  truncated: boolean;
}

const RCODE = { NOERROR: 0, FORMERR: 1, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;
const HEADER_BYTES = 12;
/** An answer record's bytes besides its data: a name pointer, type, class, TTL, data length. */
const ANSWER_FIXED = 12;
const TYPE_A = 1;
const TYPE_AAAA = 28;
const CLASS_IN = 1;

/** The configured decoy addresses as record data, made once each (the config holds two at most). */
const addressCache = new Map<string, Buffer>();
function addressBytes(ip: string): Buffer | undefined {
  let b = addressCache.get(ip);
  if (b) return b;
  const p = parseIp(ip);
  if (!p) return undefined;
  b = Buffer.alloc(p.version === 4 ? 4 : 16);
  if (p.version === 4) b.writeUInt32BE(p.v4, 0);
  else for (let k = 0; k < 4; k++) b.writeUInt32BE(p.v6[k]!, 4 * k);
  if (addressCache.size < 64) addressCache.set(ip, b);
  return b;
}

/** A type name the feed accepts (`^[A-Z0-9]{1,10}$`): dns-packet's UNKNOWN_n becomes TYPEn (RFC 3597). */
export function qtypeName(type: string): string {
  const m = /^UNKNOWN_(\d+)$/.exec(type);
  const name = m ? `TYPE${m[1]}` : type.toUpperCase();
  return /^[A-Z0-9]{1,10}$/.test(name) ? name : 'TYPE0';
}

/** Decodes a query and builds its answer; undefined when the bytes are no DNS query at all. */
export function answerDnsQuery(query: Buffer, o: DnsAnswerOptions, udp: boolean): DnsOutcome | undefined {
  let packet: dnsPacket.DecodedPacket;
  try {
    packet = dnsPacket.decode(query);
  } catch {
    return undefined;
  }
  const q = packet.questions?.[0];
  if (!q || packet.type === 'response') return undefined;
  const qname = q.name === '.' || q.name === '' ? '.' : q.name.toLowerCase().replace(/\.$/, '').slice(0, 253);
  const qtype = qtypeName(String(q.type));
  const opcode = ((packet.flags ?? 0) >> 11) & 0xf;
  let rcode: DnsOutcome['rcode'];
  let rdata: Buffer | undefined;
  if (opcode !== 0) rcode = 'NOTIMP';
  else if ((packet.questions?.length ?? 0) !== 1) rcode = 'FORMERR';
  // ANY is the reflection attacker's favourite (the biggest answer for the smallest question).
  else if (qtype === 'ANY') rcode = 'REFUSED';
  else if (o.mode === 'decoy' && o.isDecoy(qname)) {
    rcode = 'NOERROR';
    if (qtype === 'A' && o.ipv4) rdata = addressBytes(o.ipv4);
    else if (qtype === 'AAAA' && o.ipv6) rdata = addressBytes(o.ipv6);
  } else rcode = 'NXDOMAIN';
  const build = (withAnswer: boolean, tc: boolean) => {
    const head = dnsPacket.encode({
      type: 'response',
      id: packet.id ?? 0,
      // AA, the client's RD echoed, the rcode; no EDNS record (it would only make the answer bigger).
      flags:
        dnsPacket.AUTHORITATIVE_ANSWER |
        ((packet.flags ?? 0) & dnsPacket.RECURSION_DESIRED) |
        (tc ? dnsPacket.TRUNCATED_RESPONSE : 0) |
        RCODE[rcode],
      questions: [{ type: q.type, name: q.name, class: q.class ?? 'IN' }],
    });
    if (!withAnswer || !rdata) return head;
    const out = Buffer.allocUnsafe(head.length + ANSWER_FIXED + rdata.length);
    head.copy(out, 0);
    out.writeUInt16BE(1, 6); // ANCOUNT
    const at = head.length;
    out.writeUInt16BE(0xc000 | HEADER_BYTES, at); // the name: a pointer to the question's
    out.writeUInt16BE(rdata.length === 4 ? TYPE_A : TYPE_AAAA, at + 2);
    out.writeUInt16BE(CLASS_IN, at + 4);
    out.writeUInt32BE(o.ttl, at + 6);
    out.writeUInt16BE(rdata.length, at + 10);
    rdata.copy(out, at + ANSWER_FIXED);
    return out;
  };
  let response = build(true, false);
  let truncated = false;
  if (udp && response.length > query.length * o.maxFactor) {
    response = build(false, true);
    truncated = true;
    // Even the bare question can outgrow a query that carried it compressed: then send nothing.
    if (response.length > query.length * o.maxFactor) return { qname, qtype, response: undefined, rcode, truncated };
  }
  return { qname, qtype, response, rcode, truncated };
}
