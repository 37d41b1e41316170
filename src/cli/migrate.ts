import type { Command } from 'commander';
import { migrateStorage } from '../storage/index.ts';
import { action } from './context.ts';

/** `umbra migrate`: creates or upgrades the distributed schema; safe from every node at once. */
export function registerMigrate(program: Command): void {
  program
    .command('migrate')
    .description('create or upgrade the PostgreSQL schema of distributed mode (idempotent; safe to run from every node at once)')
    .action(
      action(async (out, config) => {
        const c = config();
        const applied = await migrateStorage(c, (line) => out.info(line));
        if (applied === undefined) {
          out.result(
            { storage: c.storage, applied: [] },
            () => 'embedded storage: the database upgrades itself when umbra opens it; nothing to do',
          );
          return;
        }
        out.result({ storage: c.storage, schema: c.distributed?.dbSchema, applied }, () =>
          applied.length === 0
            ? `schema ${c.distributed?.dbSchema} is up to date`
            : `schema ${c.distributed?.dbSchema}: applied ${applied.join(', ')}`,
        );
      }),
    );
}
