import type { Config } from '../config.ts';

/** The server on this data dir's configured port, if it answers its health probe. */
export async function localServer(config: Config): Promise<string | undefined> {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host;
  const base = `http://${host.includes(':') ? `[${host}]` : host}:${config.httpPort}`;
  try {
    const res = await fetch(`${base}/health`, { signal: AbortSignal.timeout(1000) });
    return res.status === 200 || res.status === 503 ? base : undefined;
  } catch {
    return undefined;
  }
}
