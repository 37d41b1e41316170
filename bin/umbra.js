#!/usr/bin/env node
// The `umbra` command: the compiled service in dist/ (`npm run build`; `npm ci` runs it too).
import { existsSync } from 'node:fs';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('umbra: not built yet: run `npm run build` (npm ci builds it too)\n');
  process.exit(2);
}
const { main: run } = await import(main.href);
process.exitCode = await run(process.argv.slice(2));
// The verb has finished (serve returns once it has shut down) and said how. Whatever still holds the
// event loop a second later is cut: a client library may keep a socket of a connection that failed
// (a NATS server that accepted it and never answered), and the command must end all the same.
setTimeout(() => process.exit(), 1_000).unref();
