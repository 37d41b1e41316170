import { request, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';

/** A live NDJSON stream read over a real socket, as a customer's client would. */
export interface StreamClient {
  status: number;
  headers: IncomingHttpHeaders;
  /** Every line received so far, keepalive (empty) lines included. */
  lines: string[];
  /** The JSON body of a non-200 answer. */
  body?: unknown;
  /** Resolves with how the response ended: 'end' (clean close) or 'aborted' (cut by the server). */
  ended: Promise<'end' | 'aborted'>;
  /** Resolves once at least n non-empty lines arrived. */
  records(n: number, timeoutMs?: number): Promise<unknown[]>;
  pause(): void;
  close(): void;
  res: IncomingMessage;
}

export function openStream(port: number, path: string, key?: string): Promise<StreamClient> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: key ? { 'x-api-key': key } : {} }, (res) => {
      const lines: string[] = [];
      let rest = '';
      let waiters: Array<() => void> = [];
      const wake = () => {
        const w = waiters;
        waiters = [];
        for (const f of w) f();
      };
      const ended = new Promise<'end' | 'aborted'>((done) => {
        res.on('end', () => done('end'));
        res.on('aborted', () => done('aborted'));
        res.on('error', () => done('aborted'));
        res.on('close', () => done(res.complete ? 'end' : 'aborted'));
      });
      const client: StreamClient = {
        status: res.statusCode ?? 0,
        headers: res.headers,
        lines,
        ended,
        res,
        records: (n, timeoutMs = 5000) =>
          new Promise((ok, fail) => {
            const timer = setTimeout(
              () => fail(new Error(`only ${lines.filter(Boolean).length} of ${n} records within ${timeoutMs} ms`)),
              timeoutMs,
            );
            const check = () => {
              const recs = lines.filter((l) => l !== '');
              if (recs.length >= n) {
                clearTimeout(timer);
                ok(recs.map((l) => JSON.parse(l)));
              } else waiters.push(check);
            };
            check();
          }),
        pause: () => res.pause(),
        close: () => req.destroy(),
      };
      res.setEncoding('utf8');
      if (res.statusCode !== 200) {
        let text = '';
        res.on('data', (c: string) => (text += c));
        res.on('end', () => {
          client.body = text ? JSON.parse(text) : undefined;
          resolve(client);
        });
        return;
      }
      res.on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop()!;
        lines.push(...parts);
        wake();
      });
      resolve(client);
    });
    req.on('error', reject);
    req.end();
  });
}
