// Runs every *.test.ts under src/, test/ and clients/ (the client package's tests) with node's test runner
// (Node 20 has no --test globs for .ts).
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const roots = process.argv.slice(2).length ? process.argv.slice(2) : ['src', 'test', 'clients'];
const files = [];
const walk = (dir) => {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'dist') walk(p);
    } else if (e.name.endsWith('.test.ts')) files.push(p);
  }
};
for (const r of roots) walk(r);
files.sort();
// The black-box tests run bin/umbra.js, which runs the compiled build: make it current first.
const built = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);
// The client's command-line tests run its compiled bin.
const client = spawnSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'clients/typescript/tsconfig.json'], {
  stdio: 'inherit',
});
if (client.status !== 0) process.exit(client.status ?? 1);
// A test that hangs fails after 5 minutes, named, instead of holding the run until CI's own limit;
// --test-force-exit ends a file whose tests are done while a handle (a socket, a timer) stays open.
// TAP on every Node: 20 writes it by default when not on a terminal, 24 writes the spec format.
// Each file's process writes its reports synchronously (scripts/test-child-stdout.mjs): a forced exit
// must not drop reports still on their way to the runner.
const r = spawnSync(
  process.execPath,
  [
    '--import',
    './scripts/test-child-stdout.mjs',
    '--import',
    'tsx',
    '--test',
    '--test-reporter=tap',
    '--test-concurrency=2',
    '--test-timeout=300000',
    '--test-force-exit',
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(r.status ?? 1);
