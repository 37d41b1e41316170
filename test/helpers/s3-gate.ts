import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface HeldRequest {
  method: string;
  /** Path and query as sent (`/bucket/key?…`). */
  url: string;
  /** Forwards the request as it came (a no-op once its client is gone). */
  release(): void;
}

/** A gate in front of an S3 endpoint: forwards every request, except those a test asked to hold. */
export interface S3Gate {
  /** The endpoint a node uses instead of the store's own. */
  endpoint: string;
  /** Holds the next request that `match`es; resolves once one has arrived (the client is then waiting on it). */
  hold(match: (method: string, url: string) => boolean): Promise<HeldRequest>;
  close(): Promise<void>;
}

/**
 * An HTTP forwarder to an S3 endpoint that can stop one request where it is, so a test can kill the
 * process that sent it at a known point of its work (an export's upload under way), which timing alone
 * would hit only by chance.
 */
export async function startS3Gate(target: string): Promise<S3Gate> {
  const to = new URL(target);
  const holds: Array<{ match: (method: string, url: string) => boolean; arrived: (h: HeldRequest) => void }> = [];
  const forward = (req: IncomingMessage, res: ServerResponse) => {
    const upstream = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  };
  const server = createServer((req, res) => {
    const i = holds.findIndex((h) => h.match(req.method ?? '', req.url ?? ''));
    if (i === -1) return forward(req, res);
    const [h] = holds.splice(i, 1);
    req.pause();
    let released = false;
    h!.arrived({
      method: req.method ?? '',
      url: req.url ?? '',
      release: () => {
        if (released || res.destroyed) return;
        released = true;
        req.resume();
        forward(req, res);
      },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    hold: (match) => new Promise((arrived) => holds.push({ match, arrived })),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
