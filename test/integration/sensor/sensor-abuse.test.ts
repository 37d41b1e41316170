import assert from 'node:assert/strict';
import { Resolver } from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, type TestContext } from 'node:test';
import { connect as tlsConnect } from 'node:tls';
import { parseSensorConfig } from '../../../src/modules/sensor/sensor-config.ts';
import { type RunningSensor, startSensor } from '../../../src/sensor/sensor.ts';
import { eventually } from '../../helpers/sensor-process.ts';
import { abuseCorpus, adbMessage, type CorpusPorts, runCorpus, sendTcp } from '../../helpers/sensor-corpus.ts';

const DOMAIN = 'corpus.example';

interface Line {
  feed: string;
  record: Record<string, any>;
}

/** The sensor in this process in dry-run mode: its records are the lines it prints. */
async function corpusSensor(t: TestContext, limits: Record<string, unknown> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'umbra-abuse-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lines: Line[] = [];
  const stdout = {
    write(s: string) {
      for (const l of s.split('\n')) if (l) lines.push(JSON.parse(l) as Line);
      return true;
    },
  } as unknown as NodeJS.WritableStream;
  const common = { bind: '127.0.0.1', port: 0, idle_timeout_ms: 2000 };
  const config = parseSensorConfig({
    identity: { proxy_ip: '198.51.100.77' },
    domains: [DOMAIN],
    listeners: [
      { protocol: 'http', ...common, public_port: 80, name: 'http' },
      { protocol: 'tls', ...common, public_port: 443, name: 'tls' },
      // The corpus comes from one address: the rate limit would hide its records.
      { protocol: 'dns', ...common, public_port: 53, name: 'dns', rate_per_source: 100_000, burst_per_source: 100_000 },
      { protocol: 'adb', ...common, public_port: 5555, name: 'adb' },
    ],
    spool: { dir: join(dir, 'spool') },
    health: { port: 0 },
    limits,
  });
  const sensor = await startSensor({ config, dryRun: true, stdout, log: () => {} });
  t.after(() => sensor.stop());
  const ports = Object.fromEntries(sensor.listeners.map((l) => [l.name, l.port])) as CorpusPorts;
  return { sensor, lines, ports };
}

const listenerOf = (sensor: RunningSensor, name: string) => sensor.health().listeners.find((l) => l.name === name)!;

/** One valid request per protocol after the corpus: each must still be captured. */
async function validRequests(ports: CorpusPorts, lines: Line[]): Promise<void> {
  const status = await new Promise<number>((resolve, reject) => {
    get({ host: '127.0.0.1', port: ports.http, path: '/after-corpus', headers: { host: DOMAIN } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });
  assert.equal(status, 200);
  assert.ok(lines.some((l) => l.feed === 'honeypot_http' && l.record.details?.uri === '/after-corpus'));

  const body = await new Promise<string>((resolve, reject) => {
    const s = tlsConnect({ host: '127.0.0.1', port: ports.tls, servername: `valid.${DOMAIN}`, rejectUnauthorized: false }, () =>
      s.write(`GET /tls-after-corpus HTTP/1.1\r\nHost: valid.${DOMAIN}\r\nConnection: close\r\n\r\n`),
    );
    let text = '';
    s.setEncoding('latin1').on('data', (c: string) => (text += c));
    s.on('end', () => resolve(text));
    s.on('error', reject);
  });
  assert.match(body, /^HTTP\/1\.1 200/);
  assert.ok(lines.some((l) => l.feed === 'honeypot_https' && l.record.details?.sni === `valid.${DOMAIN}`));
  assert.ok(lines.some((l) => l.feed === 'honeypot_http' && l.record.details?.uri === '/tls-after-corpus'));

  const resolver = new Resolver({ timeout: 3000, tries: 1 });
  resolver.setServers([`127.0.0.1:${ports.dns}`]);
  await assert.rejects(resolver.resolve4(`valid.${DOMAIN}`), { code: 'ENOTFOUND' });
  assert.ok(lines.some((l) => l.feed === 'honeypot_dns' && l.record.qname === `valid.${DOMAIN}`));

  const adb = Buffer.concat([
    adbMessage(0x4e584e43, 0x01000001, 4096, Buffer.from('host::\0')),
    adbMessage(0x4e45504f, 1, 0, Buffer.from('shell:echo after-corpus\0')),
  ]);
  const out = await sendTcp(ports.adb, adb);
  assert.ok(out.answered > 0);
  assert.ok(
    lines.some((l) => l.feed === 'honeypot_adb' && Buffer.from(l.record.command, 'base64').toString() === 'shell:echo after-corpus'),
  );
}

describe('umbra sensor: a malformed-input corpus on every listener', () => {
  it('should record each case as far as it parses or close it, stay up, and hold no memory once the connections end', async (t) => {
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    process.on('unhandledRejection', onUncaught);
    t.after(() => {
      process.off('uncaughtException', onUncaught);
      process.off('unhandledRejection', onUncaught);
    });
    const { sensor, lines, ports } = await corpusSensor(t);
    const corpus = abuseCorpus();
    const problems: string[] = [];
    let seen = 0;
    await runCorpus(ports, (c) => {
      const added = lines.slice(seen).filter((l) => l.record.qname !== 'probe.corpus.example');
      seen = lines.length;
      if (c.expect === 'record' && added.length === 0) problems.push(`${c.protocol} "${c.name}": no record`);
      if (c.expect === 'no-record' && added.length > 0) problems.push(`${c.protocol} "${c.name}": ${added.length} records`);
      if (c.detailsNull && added.some((l) => l.feed === 'honeypot_https' && l.record.details !== null))
        problems.push(`${c.protocol} "${c.name}": a record with details`);
    });
    assert.deepEqual(problems, []);
    assert.ok(corpus.length >= 100, `${corpus.length} cases`);
    // Malformed input is counted where it is seen.
    for (const name of ['http', 'tls', 'dns', 'adb']) assert.ok(Number(listenerOf(sensor, name).malformed) > 0, name);

    await validRequests(ports, lines);
    // Every byte reserved for a connection or a record is given back once nothing is in progress.
    await eventually(
      async () => (sensor.health().listeners.every((l) => l.buffered_bytes === 0 && l.open_connections === 0) ? true : undefined),
      10_000,
      'every listener back to 0 buffered bytes',
    );
    assert.equal(sensor.health().memory.buffered_bytes, 0);
    assert.deepEqual(uncaught, []);
  });
});
