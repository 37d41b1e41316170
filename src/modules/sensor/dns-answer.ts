import * as dnsPacket from 'dns-packet';

/**
 * What the DNS listener answers, decided from the query bytes alone (dns-packet decodes them; its
 * name decoder refuses compression pointers that do not point backwards, so a pointer loop is an
 * error, not a hang). The answer is never larger than the query times `maxFactor`: a bigger one is
 * replaced by an empty answer with the TC bit (a real resolver then asks again over TCP, where a
 * spoofed source cannot), so the listener cannot amplify a reflection attack.
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
  let answers: dnsPacket.Answer[] = [];
  if (opcode !== 0) rcode = 'NOTIMP';
  else if ((packet.questions?.length ?? 0) !== 1) rcode = 'FORMERR';
  // ANY is the reflection attacker's favourite (the biggest answer for the smallest question).
  else if (qtype === 'ANY') rcode = 'REFUSED';
  else if (o.mode === 'decoy' && o.isDecoy(qname) && ((qtype === 'A' && o.ipv4) || (qtype === 'AAAA' && o.ipv6))) {
    rcode = 'NOERROR';
    answers = [{ type: qtype as 'A', name: q.name, ttl: o.ttl, class: 'IN', data: qtype === 'A' ? o.ipv4! : o.ipv6! }];
  } else if (o.mode === 'decoy' && o.isDecoy(qname)) rcode = 'NOERROR';
  else rcode = 'NXDOMAIN';
  const build = (withAnswers: boolean, tc: boolean) =>
    dnsPacket.encode({
      type: 'response',
      id: packet.id ?? 0,
      // AA, the client's RD echoed, the rcode; no EDNS record (it would only make the answer bigger).
      flags:
        dnsPacket.AUTHORITATIVE_ANSWER |
        ((packet.flags ?? 0) & dnsPacket.RECURSION_DESIRED) |
        (tc ? dnsPacket.TRUNCATED_RESPONSE : 0) |
        RCODE[rcode],
      questions: [{ type: q.type, name: q.name, class: q.class ?? 'IN' }],
      answers: withAnswers ? answers : [],
    });
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
