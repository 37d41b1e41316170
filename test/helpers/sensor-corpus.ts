import { createSocket } from 'node:dgram';
import { connect } from 'node:net';

/**
 * Malformed inputs for each sensor listener, generated here (no binary fixtures): the bytes an
 * attacker or a broken scanner sends. Each case says what the listener must make of it: a record (as
 * far as it parses), no record (closed, counted as malformed), or either (the input is valid enough
 * that both are right, e.g. a hello whose lengths lie but still parse).
 */

export type Protocol = 'http' | 'tls' | 'dns' | 'adb';

export interface AbuseCase {
  protocol: Protocol;
  transport: 'tcp' | 'udp';
  name: string;
  bytes: Buffer;
  expect: 'record' | 'no-record' | 'either';
  /** TLS: bytes that are no ClientHello give a record with details null. */
  detailsNull?: boolean;
}

const b = (s: string) => Buffer.from(s, 'latin1');
const u16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const u24 = (n: number) => Buffer.from([(n >> 16) & 0xff, (n >> 8) & 0xff, n & 0xff]);

// ---- HTTP ----

function httpCases(): AbuseCase[] {
  const c = (name: string, bytes: Buffer): AbuseCase => ({ protocol: 'http', transport: 'tcp', name, bytes, expect: 'record' });
  return [
    c('head of 1 MB without an end', Buffer.concat([b('GET / HTTP/1.1\r\nX-Fill: '), Buffer.alloc(1_048_576, 0x61)])),
    c('1 MB of header lines', b(`GET / HTTP/1.1\r\n${'X-A: b\r\n'.repeat(131_072)}\r\n`)),
    c('header lines without colons', b('GET / HTTP/1.1\r\nHost example\r\nno colon here\r\n:\r\n\r\n')),
    c('NUL bytes in the request line and headers', b('GET /\0\0 HTTP/1.1\r\nHost: a\0b\r\n\0: \0\r\n\r\n')),
    c('bare LF line endings', b('GET /lf HTTP/1.1\nHost: lf.example\nX: y\n\n')),
    c('absurd Content-Length', b('POST / HTTP/1.1\r\nContent-Length: 99999999999999999999999\r\n\r\nabc')),
    c('negative Content-Length', b('POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\nabc')),
    c('two different Content-Lengths', b('POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 900000\r\n\r\nabc')),
    c('Content-Length past the body, then end', b('POST / HTTP/1.1\r\nContent-Length: 1000000000\r\n\r\nshort')),
    c('chunked with a size that is no hex', b('POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n')),
    c('chunked with a 2^64 size', b('POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFF\r\nabc\r\n')),
    c(
      'chunked without its last chunk, 200 KB',
      Buffer.concat([b('POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n'), Buffer.alloc(200_000, 0x31)]),
    ),
    c('only a blank line', b('\r\n\r\n')),
    c('a method and nothing else', b('GET')),
    c('binary garbage', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) & 0xff))),
    c('a request line of 100,000 spaces', Buffer.concat([b('GET'), Buffer.alloc(100_000, 0x20), b('/ HTTP/1.1\r\n\r\n')])),
    c('1,000 pipelined requests', b('GET /p HTTP/1.1\r\nHost: p\r\n\r\n'.repeat(1000))),
    c('the HTTP/2 preface', b('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')),
    c('a TLS ClientHello on the HTTP port', Buffer.concat([Buffer.from([0x16, 0x03, 0x01, 0x00, 0x40]), Buffer.alloc(0x40, 1)])),
  ];
}

// ---- TLS ----

interface HelloShape {
  sni?: string;
  /** Lies written in place of the true lengths. */
  recordLen?: number;
  handshakeLen?: number;
  sessionIdLen?: number;
  suitesLen?: number;
  extensionsLen?: number;
  sniExtLen?: number;
  sniNameLen?: number;
  /** Bytes of padding inside an extension, to make the hello big. */
  padding?: number;
  contentType?: number;
}

/** A TLS 1.2-style ClientHello record built field by field, each length replaceable by a lie. */
export function clientHello(o: HelloShape = {}): Buffer {
  const name = b(o.sni ?? 'corpus.example');
  const sniBody = Buffer.concat([u16(name.length + 3), Buffer.from([0]), u16(o.sniNameLen ?? name.length), name]);
  const sniExt = Buffer.concat([u16(0), u16(o.sniExtLen ?? sniBody.length), sniBody]);
  const padExt = o.padding ? Buffer.concat([u16(21), u16(o.padding), Buffer.alloc(o.padding)]) : Buffer.alloc(0);
  const exts = Buffer.concat([sniExt, padExt]);
  const suites = Buffer.from([0x13, 0x01, 0xc0, 0x2f, 0x00, 0x9c]);
  const body = Buffer.concat([
    Buffer.from([0x03, 0x03]),
    Buffer.alloc(32, 0x5a),
    Buffer.from([o.sessionIdLen ?? 0]),
    u16(o.suitesLen ?? suites.length),
    suites,
    Buffer.from([1, 0]),
    u16(o.extensionsLen ?? exts.length),
    exts,
  ]);
  const handshake = Buffer.concat([Buffer.from([1]), u24(o.handshakeLen ?? body.length), body]);
  return Buffer.concat([Buffer.from([o.contentType ?? 0x16, 0x03, 0x01]), u16(o.recordLen ?? handshake.length), handshake]);
}

function tlsCases(): AbuseCase[] {
  const c = (name: string, bytes: Buffer, expect: AbuseCase['expect'] = 'record', detailsNull = true): AbuseCase => ({
    protocol: 'tls',
    transport: 'tcp',
    name,
    bytes,
    expect,
    detailsNull,
  });
  const whole = clientHello();
  const cases: AbuseCase[] = [];
  for (const cut of [1, 3, 5, 6, 9, 43, 44, whole.length - 1])
    cases.push(c(`a hello cut at byte ${cut} of ${whole.length}`, whole.subarray(0, cut)));
  cases.push(
    c('record length 16 KiB + 1', clientHello({ recordLen: 0x4001, padding: 0x4001 - 100 })),
    c('record length 65,535 with 70 KB sent', Buffer.concat([clientHello({ recordLen: 0xffff }), Buffer.alloc(70_000, 0x41)])),
    c('a 16 KiB hello of padding (at the limit)', clientHello({ padding: 16_384 - 100 }), 'record', false),
    c('handshake length past the record', clientHello({ handshakeLen: 0xffffff })),
    c('handshake length 0', clientHello({ handshakeLen: 0 })),
    c('session id length 255 past the end', clientHello({ sessionIdLen: 255 })),
    c('cipher suites length odd and past the end', clientHello({ suitesLen: 0xfffb })),
    c('extensions length past the end', clientHello({ extensionsLen: 0xfff0 })),
    c('SNI extension length past the end', clientHello({ sniExtLen: 0x7fff })),
    c('SNI name length past the end', clientHello({ sniNameLen: 0x7fff })),
    c('record length 0', Buffer.from([0x16, 0x03, 0x01, 0x00, 0x00])),
    c('a handshake of zero lengths', Buffer.from([0x16, 0x03, 0x01, 0x00, 0x04, 0x01, 0x00, 0x00, 0x00])),
    c('a ClientHello of all-zero fields', Buffer.concat([b('\x16\x03\x01\x00\x2e\x01\x00\x00\x2a'), Buffer.alloc(0x2a)])),
    c('a ServerHello instead', Buffer.concat([b('\x16\x03\x03\x00\x2e\x02\x00\x00\x2a'), Buffer.alloc(0x2a, 3)])),
    c('application data instead of a handshake', clientHello({ contentType: 0x17 })),
    c('an SSLv2 hello', b('\x80\x2e\x01\x00\x02\x00\x15\x00\x00\x00\x10\x07\x00\xc0\x05\x00\x80\x03\x00\x80\x01\x00\x80')),
    c('plain HTTP on the TLS port', b('GET / HTTP/1.1\r\nHost: tls.example\r\n\r\n')),
    c('64 KB of zeros', Buffer.alloc(65_536)),
    c('a single handshake byte', Buffer.from([0x16])),
  );
  return cases;
}

// ---- DNS ----

const header = (o: { id?: number; flags?: number; qd?: number; an?: number } = {}) =>
  Buffer.concat([u16(o.id ?? 0x1234), u16(o.flags ?? 0x0100), u16(o.qd ?? 1), u16(o.an ?? 0), u16(0), u16(0)]);
const qname = (...labels: string[]) =>
  Buffer.concat([...labels.map((l) => Buffer.concat([Buffer.from([l.length]), b(l)])), Buffer.from([0])]);
const question = (name: Buffer, type = 1) => Buffer.concat([name, u16(type), u16(1)]);

/** A well-formed query for `name` (A, IN, RD). */
export function dnsQuery(name: string, id = 0x4242): Buffer {
  return Buffer.concat([header({ id }), question(qname(...name.split('.')))]);
}

function dnsMessages(): Array<{ name: string; bytes: Buffer; expect: AbuseCase['expect'] }> {
  const n = (name: string, bytes: Buffer, expect: AbuseCase['expect'] = 'no-record') => ({ name, bytes, expect });
  return [
    n('a pointer to itself (compression loop)', Buffer.concat([header(), Buffer.from([0xc0, 12]), u16(1), u16(1)])),
    n('two pointers to each other', Buffer.concat([header(), Buffer.from([1, 0x61, 0xc0, 16, 0xc0, 12]), u16(1), u16(1)])),
    n('a pointer forward', Buffer.concat([header(), Buffer.from([0xc0, 20]), u16(1), u16(1), qname('x')])),
    n('a pointer out of range', Buffer.concat([header(), Buffer.from([0xff, 0xff]), u16(1), u16(1)])),
    n(
      'a label of 64 (reserved length bits)',
      Buffer.concat([header(), Buffer.from([64]), Buffer.alloc(64, 0x61), Buffer.from([0]), u16(1), u16(1)]),
    ),
    n('a label length of 0x80', Buffer.concat([header(), Buffer.from([0x80, 0x61, 0]), u16(1), u16(1)])),
    n('a name of 320 bytes', Buffer.concat([header(), question(qname(...Array.from({ length: 5 }, () => 'a'.repeat(63))))])),
    n('a label running past the end', Buffer.concat([header(), Buffer.from([40, 0x61, 0x62])])),
    n('qdcount 0', header({ qd: 0 })),
    n('qdcount 65,535 with one question', Buffer.concat([header({ qd: 65_535 }), question(qname('a', 'example'))])),
    n('qdcount 2 with one question', Buffer.concat([header({ qd: 2 }), question(qname('b', 'example'))])),
    n('a header of 11 bytes', header().subarray(0, 11)),
    n('a header of 2 bytes', Buffer.from([0x12, 0x34])),
    n('a response instead of a query', Buffer.concat([header({ flags: 0x8180 }), question(qname('r', 'example'))])),
    n('opcode 15', Buffer.concat([header({ flags: 0x7900 }), question(qname('o', 'example'))]), 'record'),
    n('a question without type and class', Buffer.concat([header(), qname('t', 'example')])),
    n('ancount 65,535 and no answers', Buffer.concat([header({ an: 65_535 }), question(qname('c', 'example'))])),
    n('type 65,535', Buffer.concat([header(), question(qname('t', 'example'), 65_535)]), 'record'),
    n('class 65,535 and type 0', Buffer.concat([header(), qname('k', 'example'), u16(0), u16(65_535)]), 'record'),
    n('1,000 bytes of 0xff', Buffer.alloc(1000, 0xff)),
  ];
}

function dnsCases(): AbuseCase[] {
  const cases: AbuseCase[] = [];
  for (const m of dnsMessages()) {
    cases.push({ protocol: 'dns', transport: 'udp', name: `UDP: ${m.name}`, bytes: m.bytes, expect: m.expect });
    cases.push({
      protocol: 'dns',
      transport: 'tcp',
      name: `TCP: ${m.name}`,
      bytes: Buffer.concat([u16(m.bytes.length), m.bytes]),
      expect: m.expect,
    });
  }
  const q = dnsQuery('lie.example');
  const t = (name: string, bytes: Buffer, expect: AbuseCase['expect']): AbuseCase => ({
    protocol: 'dns',
    transport: 'tcp',
    name,
    bytes,
    expect,
  });
  cases.push(
    t('TCP: length prefix 65,535 over a short message', Buffer.concat([u16(0xffff), q]), 'no-record'),
    t('TCP: length prefix 0, then a query', Buffer.concat([u16(0), u16(q.length), q]), 'record'),
    t('TCP: length prefix shorter than its message', Buffer.concat([u16(5), q]), 'no-record'),
    t('TCP: one byte of length', Buffer.from([0]), 'no-record'),
    t('TCP: 200 KB of length prefixes 65,535', Buffer.alloc(200_000, 0xff), 'no-record'),
  );
  return cases;
}

// ---- ADB ----

const A = { CNXN: 0x4e584e43, OPEN: 0x4e45504f, WRTE: 0x45545257, CLSE: 0x45534c43, OKAY: 0x59414b4f };

/** One ADB message; `length`, `checksum` and `magic` may lie. */
export function adbMessage(
  command: number,
  arg0: number,
  arg1: number,
  data: Buffer = Buffer.alloc(0),
  lie: { length?: number; checksum?: number; magic?: number } = {},
): Buffer {
  const h = Buffer.alloc(24);
  h.writeUInt32LE(command >>> 0, 0);
  h.writeUInt32LE(arg0 >>> 0, 4);
  h.writeUInt32LE(arg1 >>> 0, 8);
  h.writeUInt32LE((lie.length ?? data.length) >>> 0, 12);
  let sum = 0;
  for (const x of data) sum = (sum + x) >>> 0;
  h.writeUInt32LE((lie.checksum ?? sum) >>> 0, 16);
  h.writeUInt32LE((lie.magic ?? command ^ 0xffffffff) >>> 0, 20);
  return Buffer.concat([h, data]);
}

const cnxn = () => adbMessage(A.CNXN, 0x01000001, 256 * 1024, b('host::\0'));

function adbCases(): AbuseCase[] {
  const c = (name: string, bytes: Buffer, expect: AbuseCase['expect']): AbuseCase => ({
    protocol: 'adb',
    transport: 'tcp',
    name,
    bytes,
    expect,
  });
  const syncHeader = (id: string, len: number) => {
    const h = Buffer.alloc(8);
    h.write(id, 0, 'latin1');
    h.writeUInt32LE(len >>> 0, 4);
    return h;
  };
  return [
    c('CNXN with a wrong checksum', adbMessage(A.CNXN, 0x01000001, 4096, b('host::\0'), { checksum: 0xdeadbeef }), 'no-record'),
    c('OPEN with a wrong checksum', Buffer.concat([cnxn(), adbMessage(A.OPEN, 1, 0, b('shell:id\0'), { checksum: 1 })]), 'record'),
    c('a wrong magic', adbMessage(A.CNXN, 0x01000001, 4096, b('host::\0'), { magic: 0 }), 'no-record'),
    c('data length 0xFFFFFFFF', adbMessage(A.CNXN, 0x01000001, 4096, Buffer.alloc(0), { length: 0xffffffff }), 'no-record'),
    c('data length 2 GiB', adbMessage(A.WRTE, 1, 1, Buffer.alloc(100), { length: 0x80000000 }), 'no-record'),
    c('data length 256 KiB + 1', adbMessage(A.WRTE, 1, 1, Buffer.alloc(100), { length: 256 * 1024 + 1 }), 'no-record'),
    c('data length 1000, 10 bytes sent', adbMessage(A.CNXN, 0x01000001, 4096, Buffer.alloc(10), { length: 1000 }), 'no-record'),
    c('a header of 10 bytes', cnxn().subarray(0, 10), 'no-record'),
    c('an unknown command', Buffer.concat([cnxn(), adbMessage(0x41414141, 1, 2)]), 'no-record'),
    c('OPEN before CNXN', adbMessage(A.OPEN, 7, 0, b('shell:uname -a\0')), 'record'),
    c('OPEN without a NUL', adbMessage(A.OPEN, 7, 0, b('exec:id')), 'record'),
    c(
      'WRTE to unknown stream ids',
      Buffer.concat([cnxn(), adbMessage(A.WRTE, 5, 999, b('ls\n')), adbMessage(A.WRTE, 5, 0xffffffff, b('id\n'))]),
      'no-record',
    ),
    c('CLSE and OKAY of unknown streams', Buffer.concat([cnxn(), adbMessage(A.CLSE, 1, 12345), adbMessage(A.OKAY, 1, 54321)]), 'no-record'),
    c(
      'a shell line of 200 KB without a newline',
      Buffer.concat([cnxn(), adbMessage(A.OPEN, 1, 0, b('shell:\0')), adbMessage(A.WRTE, 1, 1, Buffer.alloc(200_000, 0x61))]),
      'no-record',
    ),
    c(
      'a sync request of length 0xFFFFFFFF',
      Buffer.concat([cnxn(), adbMessage(A.OPEN, 1, 0, b('sync:\0')), adbMessage(A.WRTE, 1, 1, syncHeader('SEND', 0xffffffff))]),
      'no-record',
    ),
    c(
      'a sync DATA before SEND, then DONE',
      Buffer.concat([
        cnxn(),
        adbMessage(A.OPEN, 1, 0, b('sync:\0')),
        adbMessage(A.WRTE, 1, 1, Buffer.concat([syncHeader('DATA', 4), b('abcd'), syncHeader('DONE', 0)])),
      ]),
      'no-record',
    ),
    c(
      'an unknown sync request',
      Buffer.concat([cnxn(), adbMessage(A.OPEN, 1, 0, b('sync:\0')), adbMessage(A.WRTE, 1, 1, syncHeader('ZZZZ', 0))]),
      'no-record',
    ),
    c(
      '2,000 shell streams opened',
      Buffer.concat([cnxn(), ...Array.from({ length: 2000 }, (_, i) => adbMessage(A.OPEN, i + 1, 0, b('shell:\0')))]),
      'no-record',
    ),
    c('HTTP on the ADB port', b('GET / HTTP/1.1\r\nHost: adb\r\n\r\n'), 'no-record'),
  ];
}

export function abuseCorpus(): AbuseCase[] {
  return [...httpCases(), ...tlsCases(), ...dnsCases(), ...adbCases()];
}

/** What one case did to its connection. */
export interface CaseOutcome {
  /** The listener closed (or reset) the connection; UDP: the probe after it was answered. */
  closed: boolean;
  answered: number;
}

/**
 * Sends `bytes` on a TCP connection, ends its side and waits until the listener closes it. The client
 * leaves as soon as the listener ends its side (an attacker's tool may not; the idle timeout covers that).
 */
export function sendTcp(port: number, bytes: Buffer, timeoutMs = 15_000): Promise<CaseOutcome> {
  return new Promise((resolve, reject) => {
    let answered = 0;
    const s = connect(port, '127.0.0.1', () => {
      s.write(bytes, () => s.end());
    });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new Error(`port ${port} kept the connection open for ${timeoutMs} ms`));
    }, timeoutMs);
    s.on('data', (c: Buffer) => (answered += c.length));
    s.on('end', () => s.destroy());
    s.on('error', () => {});
    s.on('close', () => {
      clearTimeout(timer);
      resolve({ closed: true, answered });
    });
  });
}

/** Sends a datagram, then a valid query as a probe, and waits for the probe's answer (the listener is still up). */
export function sendUdp(port: number, bytes: Buffer, timeoutMs = 5000): Promise<CaseOutcome> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    const probeId = Math.floor(Math.random() * 0xffff);
    let answered = 0;
    const timer = setTimeout(() => {
      s.close();
      reject(new Error(`the DNS listener did not answer a probe within ${timeoutMs} ms`));
    }, timeoutMs);
    s.on('message', (m) => {
      if (m.length >= 2 && m.readUInt16BE(0) === probeId) {
        clearTimeout(timer);
        s.close();
        resolve({ closed: true, answered });
      } else answered += m.length;
    });
    s.send(bytes, port, '127.0.0.1', () => s.send(dnsQuery('probe.corpus.example', probeId), port, '127.0.0.1'));
  });
}

export type CorpusPorts = Record<Protocol, number>;

/** Runs every case against the listeners, one after another; `after` sees each case with its outcome. */
export async function runCorpus(
  ports: CorpusPorts,
  after?: (c: AbuseCase, o: CaseOutcome) => void | Promise<void>,
  cases = abuseCorpus(),
): Promise<void> {
  for (const c of cases) {
    const port = ports[c.protocol];
    const outcome = c.transport === 'udp' ? await sendUdp(port, c.bytes) : await sendTcp(port, c.bytes);
    await after?.(c, outcome);
  }
}
