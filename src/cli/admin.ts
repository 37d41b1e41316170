import type { Command } from 'commander';
import { parseDuration } from '../lib/duration.ts';
import { AppError } from '../errors.ts';
import type { KeyView, OrgView } from '../modules/accounts/admin-service.ts';
import { parseScopeList, SCOPES } from '../modules/accounts/scopes.ts';
import { action, withAdmin } from './context.ts';
import { numberArg, wholeArg } from './output.ts';
import { registerOverlay } from './overlay.ts';

const fmtTime = (s: number | null) => (s === null ? '-' : new Date(s * 1000).toISOString().replace('.000Z', 'Z'));

function orgText(o: OrgView): string {
  const lines = [
    `organization ${o.name} (${o.id})`,
    `  credits: ${o.credits.balance} of ${o.credits.allotment} per ${o.credits.reset_period_seconds} s, resets at ` +
      `${fmtTime(o.credits.resets_at)} (in ${o.credits.resets_in} s)`,
    `  max concurrent streams: ${o.max_streams}`,
    `  keys: ${o.keys.length === 0 ? 'none' : ''}`,
    ...o.keys.map((k) => `    ${keyLine(k)}`),
    '  rate limits (rate/s, burst):',
    ...Object.entries(o.limits).map(([b, r]) => `    ${b.padEnd(9)} ${r.rate}/s burst ${r.burst}${r.overridden ? ' (override)' : ''}`),
  ];
  return lines.join('\n');
}

const keyLine = (k: KeyView) =>
  `${k.id}  ${k.revoked_at === null ? 'active ' : 'revoked'}  ${k.name ?? '-'}  created ${fmtTime(k.created_at)}  scopes ` +
  `${k.scopes.join(',')}`;

function scopesArg(text: string) {
  const { scopes, unknown } = parseScopeList(text);
  if (unknown.length)
    throw AppError.field('scopes', `unknown scope${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; known: ${SCOPES.join(', ')}`);
  return scopes;
}

/** `umbra admin …`: teams, keys, credits and limits, on the same store the server uses (safe while it runs). */
export function registerAdmin(program: Command): void {
  const admin = program.command('admin').description('administer organizations, keys, credits and rate limits');

  const org = admin.command('org').description('organizations (teams)');
  org
    .command('create')
    .requiredOption('--name <name>', 'display name (unique)')
    .option('--credits <n>', 'lookup credits per billing period (default 10000)')
    .option('--reset-period <duration>', 'billing period, e.g. 30d, 12h (default 30d)')
    .option('--max-streams <n>', 'concurrent stream allowance (default 10)')
    .action(
      action(async (out, config, o: { name: string; credits?: string; resetPeriod?: string; maxStreams?: string }) => {
        const credits = wholeArg('credits', o.credits);
        const maxStreams = wholeArg('max-streams', o.maxStreams);
        let period: number | undefined;
        if (o.resetPeriod !== undefined) {
          period = parseDuration(o.resetPeriod);
          if (period === undefined)
            throw AppError.field('reset-period', `must be a duration like 30d, 12h, 90m or 3600s, got '${o.resetPeriod}'`);
        }
        const view = await withAdmin(config(), (a) => a.createOrg({ name: o.name, credits, resetPeriodSeconds: period, maxStreams }));
        out.result(view, () => orgText(view));
      }),
    );
  org
    .command('show')
    .argument('<org>', 'organization id or name')
    .action(
      action(async (out, config, ref: string) => {
        const view = await withAdmin(config(), (a) => a.showOrg(ref));
        out.result(view, () => orgText(view));
      }),
    );
  org
    .command('set')
    .argument('<org>', 'organization id or name')
    .requiredOption('--max-streams <n>', 'concurrent stream allowance')
    .action(
      action(async (out, config, ref: string, o: { maxStreams: string }) => {
        const maxStreams = wholeArg('max-streams', o.maxStreams)!;
        const view = await withAdmin(config(), (a) => a.setMaxStreams(ref, maxStreams));
        out.result(view, () => orgText(view));
      }),
    );
  org.command('list').action(
    action(async (out, config) => {
      const orgs = await withAdmin(config(), (a) => a.listOrgs());
      out.result(orgs, () => (orgs.length ? orgs.map((o) => `${o.id}  ${o.name}`).join('\n') : 'no organizations'));
    }),
  );

  const key = admin.command('key').description('API keys');
  key
    .command('create')
    .requiredOption('--org <org>', 'organization id or name')
    .requiredOption('--email <email>', "member's e-mail (the member is created if new)")
    .requiredOption('--scopes <list>', `comma list of ${SCOPES.join(', ')}`)
    .option('--first-name <name>')
    .option('--last-name <name>')
    .option('--relation <relation>', 'OWNER, ADMIN or MEMBER (the first member defaults to OWNER)')
    .option('--name <label>', 'a label for the key')
    .action(
      action(
        async (
          out,
          config,
          o: { org: string; email: string; scopes: string; firstName?: string; lastName?: string; relation?: string; name?: string },
        ) => {
          const scopes = scopesArg(o.scopes);
          const made = await withAdmin(config(), (a) =>
            a.createKey({
              org: o.org,
              email: o.email,
              scopes,
              firstName: o.firstName,
              lastName: o.lastName,
              relation: o.relation?.toUpperCase(),
              name: o.name,
            }),
          );
          out.result({ ...made.key, key: made.secret, member: made.member }, () =>
            [
              `key ${made.key.id} created for ${made.member.email} (${made.member.relation}${made.member.created ? ', new member' : ''})`,
              `scopes: ${scopes.join(',')}`,
              '',
              `  ${made.secret}`,
              '',
              'This is the only time the key is shown; umbra stores only its SHA-256.',
            ].join('\n'),
          );
        },
      ),
    );
  key
    .command('revoke')
    .argument('<key-id>', "the key's id (from 'key list'), not the secret")
    .action(
      action(async (out, config, id: string) => {
        const k = await withAdmin(config(), (a) => a.revokeKey(id));
        out.result(k, () => `revoked ${k.id}`);
      }),
    );
  key
    .command('list')
    .requiredOption('--org <org>', 'organization id or name')
    .action(
      action(async (out, config, o: { org: string }) => {
        const keys = await withAdmin(config(), (a) => a.listKeys(o.org));
        out.result(keys, () => (keys.length ? keys.map(keyLine).join('\n') : 'no keys'));
      }),
    );

  const credits = admin.command('credits').description("a team's lookup credit balance");
  for (const verb of ['set', 'add'] as const) {
    credits
      .command(verb)
      .requiredOption('--org <org>', 'organization id or name')
      .argument('<n>', verb === 'set' ? 'new balance' : 'credits to add')
      .action(
        action(async (out, config, n: string, o: { org: string }) => {
          const amount = wholeArg('credits', n, verb === 'add' ? 1 : 0)!;
          const view = await withAdmin(config(), (a) => (verb === 'set' ? a.setCredits(o.org, amount) : a.addCredits(o.org, amount)));
          out.result(view, () => `${view.name}: ${view.credits.balance} credits, resets in ${view.credits.resets_in} s`);
        }),
      );
  }

  const limits = admin.command('limits').description("a team's rate buckets (overrides of the default rates)");
  limits
    .command('set')
    .requiredOption('--org <org>')
    .requiredOption('--bucket <bucket>', 'lookup, domain, account, stream, export or download')
    .requiredOption('--rate <r>', 'tokens per second')
    .requiredOption('--burst <b>', 'bucket size')
    .action(
      action(async (out, config, o: { org: string; bucket: string; rate: string; burst: string }) => {
        const rule = { rate: numberArg('rate', o.rate), burst: wholeArg('burst', o.burst, 1)! };
        const view = await withAdmin(config(), (a) => a.setLimit(o.org, o.bucket, rule));
        out.result(view.limits, () => orgText(view));
      }),
    );
  limits
    .command('show')
    .requiredOption('--org <org>')
    .action(
      action(async (out, config, o: { org: string }) => {
        const view = await withAdmin(config(), (a) => a.showOrg(o.org));
        out.result(view.limits, () => orgText(view));
      }),
    );
  limits
    .command('reset')
    .requiredOption('--org <org>')
    .option('--bucket <bucket>', 'only this bucket')
    .action(
      action(async (out, config, o: { org: string; bucket?: string }) => {
        const view = await withAdmin(config(), (a) => a.resetLimits(o.org, o.bucket));
        out.result(view.limits, () => orgText(view));
      }),
    );

  registerOverlay(admin);
}
