import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Services } from '../services.ts';
import { SCOPES } from '../modules/accounts/scopes.ts';

export const DEMO_ORG = 'demo';

/**
 * Creates the demo team and a key holding every scope, idempotently. Keys are stored only as hashes,
 * so the demo secret is kept in a 0600 file under the data dir to print it again on the next start.
 */
export async function ensureDemo(services: Services, dataDir: string): Promise<string> {
  const admin = services.admin;
  if (!(await admin.listOrgs()).some((o) => o.name.toLowerCase() === DEMO_ORG)) {
    await admin.createOrg({ name: DEMO_ORG, credits: 1_000_000, resetPeriodSeconds: 30 * 86400 });
  }
  const file = join(dataDir, 'demo-key');
  if (existsSync(file)) {
    const secret = readFileSync(file, 'utf8').trim();
    const verified = await services.accounts.verifyKey(secret);
    if (verified.ok && verified.caller.owner.org.name.toLowerCase() === DEMO_ORG) return secret;
  }
  const made = await admin.createKey({
    org: DEMO_ORG,
    email: 'demo@umbra.local',
    firstName: 'Demo',
    lastName: 'User',
    scopes: [...SCOPES],
    name: 'demo',
  });
  writeFileSync(file, `${made.secret}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  services.accounts.invalidate();
  return made.secret;
}
