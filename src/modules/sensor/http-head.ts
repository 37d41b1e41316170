/**
 * A lenient reader of HTTP/1.x request heads, for a honeypot: it never refuses, it says how far the
 * bytes parse. Node's own parser (llhttp) drops a malformed request without showing its bytes, which
 * are the interesting ones here; this reader keeps whatever it can (method, target, version, headers)
 * and the listener keeps the raw bytes alongside.
 */

export interface HttpHead {
  /** Empty strings where the request line did not carry the part. */
  method: string;
  uri: string;
  version: string;
  /** Header names as sent; a repeated header's values joined with ", " under its first spelling. */
  headers: Record<string, string>;
  /** Declared body length; undefined when absent or unreadable. */
  contentLength: number | undefined;
  chunked: boolean;
  /** The client asked to close after this request (or HTTP/1.0 without keep-alive). */
  close: boolean;
  /** Lines that are not `name: value` headers, or a request line not of three parts. */
  malformed: boolean;
}

/** Limits of the recorded fields: the honeypot_http schema's lengths. */
export const HEAD_FIELD_LIMITS = { method: 32, uri: 16_384, version: 16, headerName: 256, headerValue: 16_384, headers: 256 } as const;

/**
 * The end of the head in `buf` (the index just past the blank line), or -1 while it is not complete.
 * Both CRLF CRLF and bare LF LF end a head, as lenient servers accept.
 */
export function headEnd(buf: Buffer, from = 0): number {
  for (let i = Math.max(0, from); i < buf.length; i++) {
    if (buf[i] !== 10) continue;
    // LF LF, or LF CR LF.
    if (buf[i + 1] === 10) return i + 2;
    if (buf[i + 1] === 13 && buf[i + 2] === 10) return i + 3;
  }
  return -1;
}

/** Reads a head (complete or cut short) from its bytes, taken as ISO-8859-1 so every byte is one character. */
export function parseHttpHead(bytes: Buffer): HttpHead {
  const text = bytes.toString('latin1');
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  // Leading empty lines before a request line are allowed by RFC 9112 (section 2.2).
  let first = 0;
  while (first < lines.length - 1 && lines[first] === '') first++;
  const requestLine = lines[first] ?? '';
  const parts = requestLine.split(' ').filter((p) => p !== '');
  let malformed = parts.length !== 3;
  const head: HttpHead = {
    method: (parts[0] ?? '').slice(0, HEAD_FIELD_LIMITS.method),
    uri: (parts[1] ?? '').slice(0, HEAD_FIELD_LIMITS.uri),
    version: (parts.slice(2).join(' ') || '').slice(0, HEAD_FIELD_LIMITS.version),
    headers: {},
    contentLength: undefined,
    chunked: false,
    close: false,
    malformed,
  };
  const byLower = new Map<string, string>();
  let count = 0;
  for (let i = first + 1; i < lines.length; i++) {
    const line = lines[i]!;
    if (line === '') break;
    const colon = line.indexOf(':');
    if (colon <= 0) {
      malformed = true;
      continue;
    }
    const name = line.slice(0, colon).trim().slice(0, HEAD_FIELD_LIMITS.headerName);
    const value = line
      .slice(colon + 1)
      .trim()
      .slice(0, HEAD_FIELD_LIMITS.headerValue);
    if (name === '') {
      malformed = true;
      continue;
    }
    const lower = name.toLowerCase();
    const spelled = byLower.get(lower);
    if (spelled !== undefined) head.headers[spelled] = `${head.headers[spelled]}, ${value}`;
    else if (count < HEAD_FIELD_LIMITS.headers) {
      byLower.set(lower, name);
      head.headers[name] = value;
      count++;
    }
    if (lower === 'content-length') {
      const n = /^\d{1,15}$/.test(value) ? Number(value) : Number.NaN;
      if (Number.isNaN(n)) malformed = true;
      else head.contentLength = n;
    } else if (lower === 'transfer-encoding' && /chunked/i.test(value)) head.chunked = true;
    else if (lower === 'connection' && /close/i.test(value)) head.close = true;
  }
  const conn = byLower.has('connection') ? head.headers[byLower.get('connection')!]! : '';
  if (head.version === 'HTTP/1.0' && !/keep-alive/i.test(conn)) head.close = true;
  head.malformed = malformed;
  return head;
}
