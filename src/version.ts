import { readFileSync } from 'node:fs';

/**
 * umbra's version, from package.json: the one place a release changes it. This file sits one level
 * below the package root both as source (src/) and built (dist/), so the same relative URL finds it.
 */
export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
  .version;
