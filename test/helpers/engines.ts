import { connect } from 'node:net';

/**
 * The engines the distributed backends' tests run against. Defaults are the machine's own engines on
 * their standard ports; CI starts any that is not up. Tests that need one fail (never skip) when it
 * cannot be reached: a distributed backend that was not tested must not look like one that passed.
 */
export const testEngines = {
  databaseUrl: process.env.UMBRA_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test',
  redisUrl: process.env.UMBRA_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379',
  natsUrl: process.env.UMBRA_TEST_NATS_URL ?? 'nats://127.0.0.1:4222',
};

/** Throws with the engine's name and address when nothing listens there (a clear failure, not a hang). */
export async function requireEngine(name: string, url: string): Promise<void> {
  const u = new URL(url);
  const port = Number(u.port) || { 'postgres:': 5432, 'redis:': 6379, 'nats:': 4222 }[u.protocol] || 0;
  await new Promise<void>((resolve, reject) => {
    const socket = connect({ host: u.hostname, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
    const fail = (why: string) => {
      socket.destroy();
      reject(new Error(`${name} is not reachable at ${u.hostname}:${port} (${why}); start it (see .ci/run) and run the tests again`));
    };
    socket.once('timeout', () => fail('timed out'));
    socket.once('error', (e) => fail(e.message));
  });
}

/** A name no other test run uses: schemas, key prefixes and stream names of one test. */
export function uniqueTestName(prefix: string): string {
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`;
}
