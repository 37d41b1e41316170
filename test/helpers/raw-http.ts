import { connect, type Socket } from 'node:net';

export interface RawAnswer {
  /** Everything the server wrote, as latin1 text. */
  raw: string;
  status: number | undefined;
  /** Lower-case names. */
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection (end or reset) before the deadline. */
  closed: boolean;
}

/** Splits one HTTP/1.1 answer into status, headers and body (the body as written, no chunk decoding). */
export function parseAnswer(raw: string, closed: boolean): RawAnswer {
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1];
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { raw, status: status === undefined ? undefined : Number(status), headers, body: end === -1 ? '' : raw.slice(end + 4), closed };
}

/** Opens a raw TCP connection to 127.0.0.1:port; resolves once connected. */
export function rawConnect(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
}

/**
 * Sends `bytes` on a new connection (or `parts`, one write per part) and collects what comes back
 * until the server closes the connection or `waitMs` passes, whichever is first.
 */
export async function rawExchange(port: number, bytes: string | string[], waitMs = 3000): Promise<RawAnswer> {
  const socket = await rawConnect(port);
  return new Promise((resolve) => {
    let raw = '';
    let done = false;
    const finish = (closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(parseAnswer(raw, closed));
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.setEncoding('latin1');
    socket.on('data', (c: string) => (raw += c));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    socket.on('error', () => finish(true));
    for (const part of Array.isArray(bytes) ? bytes : [bytes]) socket.write(part);
  });
}
