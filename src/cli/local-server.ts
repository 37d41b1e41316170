import type { Config } from '../config.ts';
import { DataDirBusy, DataDirLock, describeOwner, type DirOwner } from '../storage/embedded/data-dir-lock.ts';
import { UsageError } from './output.ts';

export type DataDirState =
  | { kind: 'free' }
  | { kind: 'server'; url: string; owner: DirOwner }
  | { kind: 'busy'; owner: DirOwner | undefined };

/**
 * Who holds this data dir: nobody, a running server (and where it listens, from its owner record), or
 * another process (a server still starting, another CLI verb at work).
 */
export function dataDirState(config: Config): DataDirState {
  const held = DataDirLock.holder(config.dataDir);
  if (!held) return { kind: 'free' };
  const owner = held.owner;
  return owner?.command === 'serve' && owner.http ? { kind: 'server', url: owner.http, owner } : { kind: 'busy', owner };
}

/** The running server's base URL, if a server holds this data dir. */
export function runningServer(config: Config): string | undefined {
  const state = dataDirState(config);
  return state.kind === 'server' ? state.url : undefined;
}

/**
 * Runs a verb that writes the data dir itself, holding the data dir while it does; refused while a
 * server or another verb holds it, so nothing is ever written past a running server.
 */
export async function withDataDir<T>(config: Config, command: string, work: () => Promise<T>): Promise<T> {
  let lock: DataDirLock;
  try {
    lock = await DataDirLock.acquire(config.dataDir, command);
  } catch (e) {
    if (e instanceof DataDirBusy)
      throw new UsageError(`${e.message}; nothing was written (try again once it has finished, or send to the server)`);
    throw e;
  }
  try {
    return await work();
  } finally {
    lock.release();
  }
}

export { describeOwner };
