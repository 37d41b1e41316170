import type { Command } from 'commander';
import { CATEGORY_KINDS } from '../modules/intel/lists/list-kinds.ts';
import { AppError } from '../errors.ts';
import { systemClock } from '../lib/clock.ts';
import type { Overlay } from '../modules/intel/overlays/overlay-store.ts';
import { OverlayService } from '../modules/intel/overlays/overlay-service.ts';
import { action, withAdmin } from './context.ts';

const line = (o: Overlay) =>
  `${o.id}  ${o.action.padEnd(5)}  ${o.cidr.padEnd(20)}  ${o.category}${o.provider ? ` (${o.provider})` : ''}  created ` +
  `${new Date(o.created_at * 1000).toISOString().replace('.000Z', 'Z')}`;

const service = (config: Parameters<typeof withAdmin>[0], use: (s: OverlayService) => Promise<unknown>) =>
  withAdmin(config, (_admin, stores) => use(new OverlayService(stores.overlays, stores.accounts, systemClock)));

/**
 * `umbra admin overlay …`: a team's allow and deny corrections of IP intelligence. They change that
 * team's lookups only, within 5 s of the change (the server polls the store).
 */
export function registerOverlay(admin: Command): void {
  const overlay = admin.command('overlay').description("a team's allow/deny corrections of IP intelligence (its lookups only)");
  overlay
    .command('add')
    .requiredOption('--org <org>', 'organization id or name')
    .requiredOption('--cidr <cidr>', 'IPv4/IPv6 address or CIDR')
    .requiredOption('--category <category>', `category: ${CATEGORY_KINDS.join(', ')}`)
    .option('--provider <tag>', 'provider tag (deny: attribute to it; allow: remove only its attribution)')
    .option('--deny', 'add the category for these addresses (the default)')
    .option('--allow', 'remove the category for these addresses')
    .action(
      action(
        async (out, config, o: { org: string; cidr: string; category: string; provider?: string; deny?: boolean; allow?: boolean }) => {
          if (o.allow && o.deny) throw AppError.field('allow', 'give --allow or --deny, not both');
          const made = (await service(config(), (s) => s.add({ ...o, action: o.allow ? 'allow' : 'deny' }))) as Overlay;
          out.result(made, () => `added ${line(made)}`);
        },
      ),
    );
  overlay
    .command('list')
    .requiredOption('--org <org>', 'organization id or name')
    .action(
      action(async (out, config, o: { org: string }) => {
        const all = (await service(config(), (s) => s.list(o.org))) as Overlay[];
        out.result(all, () => (all.length === 0 ? 'no overlays' : all.map(line).join('\n')));
      }),
    );
  overlay
    .command('clear')
    .requiredOption('--org <org>', 'organization id or name')
    .option('--cidr <cidr>', 'only the overlays of this CIDR')
    .action(
      action(async (out, config, o: { org: string; cidr?: string }) => {
        const removed = (await service(config(), (s) => s.clear(o.org, o.cidr))) as number;
        out.result({ removed }, () => `removed ${removed} overlay${removed === 1 ? '' : 's'}`);
      }),
    );
}
