import { Agent, request } from 'node:http';

export interface LoadSample {
  /** performance.now() at completion (ms). */
  at: number;
  ms: number;
  status: number;
  version: string | undefined;
}

/**
 * A lookup load: `connections` keep-alive connections, each sending GET /lookup/ip/{ip} for the next
 * address as soon as the previous answer arrived (closed loop), or, with `ratePerSec`, on a schedule
 * of that many requests per second in all (paced: a server with CPU to spare, as in production).
 * Runs until `stop()`. Samples are kept per connection, in order, so a test can check what each
 * connection saw over time; with `record`, each sample goes there instead and none are kept (a long
 * load into preallocated arrays makes less garbage in the client than one object per request).
 */
export function lookupLoad(
  port: number,
  key: string,
  ips: readonly string[],
  connections: number,
  ratePerSec?: number,
  record?: (at: number, ms: number, status: number, version: string | undefined) => void,
): { stop(): Promise<LoadSample[][]> } {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  let running = true;
  let next = 0;
  const one = (ip: string) =>
    new Promise<LoadSample>((resolve) => {
      const start = performance.now();
      const req = request({ host: '127.0.0.1', port, path: `/api/v4/lookup/ip/${ip}`, agent, headers: { 'x-api-key': key } }, (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            at: performance.now(),
            ms: performance.now() - start,
            status: res.statusCode ?? 0,
            version: res.headers['x-data-version'] as string | undefined,
          }),
        );
      });
      req.on('error', () => resolve({ at: performance.now(), ms: performance.now() - start, status: 0, version: undefined }));
      req.end();
    });
  const loops = Array.from({ length: connections }, async (_, c) => {
    const samples: LoadSample[] = [];
    const intervalMs = ratePerSec ? (1000 * connections) / ratePerSec : 0;
    let due = performance.now() + (intervalMs * c) / connections;
    while (running) {
      if (intervalMs > 0) {
        const wait = due - performance.now();
        if (wait > 1) await new Promise((r) => setTimeout(r, wait));
        due += intervalMs;
      }
      const sample = await one(ips[next++ % ips.length]!);
      if (record) record(sample.at, sample.ms, sample.status, sample.version);
      else samples.push(sample);
    }
    return samples;
  });
  return {
    stop: async () => {
      running = false;
      const all = await Promise.all(loops);
      agent.destroy();
      return all;
    },
  };
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
