import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildTestApp } from '../../helpers/build-test-app.ts';

const ROOT = join(import.meta.dirname, '../../..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const TOKEN = 'operator-token-for-readme-examples-0123';

/** The README's ```sh blocks as commands, `\` continuations joined, comments and blank lines left out. */
function shellCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const block of markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)) {
    for (const command of block[1]!.replace(/\\\n\s*/g, ' ').split('\n')) {
      if (command.trim() && !command.trim().startsWith('#')) commands.push(command.trim());
    }
  }
  return commands;
}

/** The words of a command line, quotes removed (enough for the README's curl lines). */
function words(command: string): string[] {
  return [...command.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? m[3]!);
}

const commands = shellCommands(README);
const curls = commands.filter((c) => /^curl .*http:\/\/127\.0\.0\.1:8080\//.test(c));

describe('The README examples', () => {
  it('should have shell examples, among them curl calls of the local server', () => {
    assert.ok(commands.length > 20, `${commands.length} commands`);
    assert.ok(curls.length >= 10, `${curls.length} curl calls`);
  });

  it('should name no fixed date, which a fresh demo has no data for (they are computed with date)', () => {
    for (const c of commands) assert.doesNotMatch(c, /\b20\d\d-\d\d-\d\d\b/, c);
  });

  it('should call gRPC with the shipped scripts/grpc-call.py and methods the proto defines', () => {
    const proto = readFileSync(join(ROOT, 'proto/example/v1/example_service.proto'), 'utf8');
    const methods = new Set([...proto.matchAll(/^\s*rpc (\w+)\(/gm)].map((m) => `example.v1.ExampleService/${m[1]}`));
    const calls = commands.filter((c) => c.includes('scripts/grpc-call.py'));
    assert.ok(calls.length >= 4, 'the gRPC examples use the shipped client');
    assert.ok(existsSync(join(ROOT, 'scripts/grpc-call.py')));
    for (const c of calls) {
      const w = words(c);
      assert.equal(w[0], '/usr/bin/python3', `${c}: Debian's python3, the one python3-grpcio installs for`);
      const last = w.at(-1)!;
      assert.ok(last === 'list' || methods.has(last), `${c}: ${last} is no method of the proto`);
    }
  });

  it('should reach a route of the server with every curl call, with the key and token accepted', async (t) => {
    // Streams answer their headers with the first line written: a keepalive line comes at once.
    const app = await buildTestApp(t, {}, { UMBRA_OPERATOR_TOKEN: TOKEN, UMBRA_STREAM_KEEPALIVE_MS: '50' });
    const team = await app.team();
    await app.http.listen({ port: 0, host: '127.0.0.1' });
    const address = app.http.server.address();
    assert.ok(address && typeof address === 'object');
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    for (const command of curls) {
      const w = words(
        command
          .replace(/\$\(cat data\/operator-token\)/g, TOKEN)
          .replace(/\$\(date [^)]*\)/g, yesterday)
          .replace(/\$KEY/g, team.key),
      );
      const headers: Record<string, string> = {};
      let body: string | undefined;
      let url: string | undefined;
      for (let i = 1; i < w.length; i++) {
        if (w[i] === '-H') {
          const [name, ...value] = w[++i]!.split(':');
          headers[name!.trim()] = value.join(':').trim();
        } else if (w[i] === '-d' || w[i] === '--data-binary') {
          const data = w[++i]!;
          body = data.startsWith('@') ? '' : data;
        } else if (w[i]!.startsWith('http://127.0.0.1:8080/')) {
          url = w[i]!.replace('127.0.0.1:8080', `127.0.0.1:${address.port}`);
        }
      }
      assert.ok(url, command);
      const abort = new AbortController();
      const res = await fetch(url, {
        method: body === undefined ? 'GET' : 'POST',
        headers,
        body,
        redirect: 'manual',
        signal: abort.signal,
      });
      const text = res.headers.get('content-type')?.includes('ndjson') ? '' : await res.text();
      abort.abort();
      assert.doesNotMatch(text, /No route/, `${command}: no such route`);
      assert.ok(![401, 403].includes(res.status) && res.status < 500, `${command}: ${res.status} ${text}`);
    }
    // fetch keeps its connections alive: close them rather than wait out the server's keep-alive timeout.
    app.http.server.closeAllConnections();
  });
});
