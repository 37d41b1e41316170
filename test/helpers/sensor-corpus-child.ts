import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSensorConfig } from '../../src/modules/sensor/sensor-config.ts';
import { startSensor } from '../../src/sensor/sensor.ts';

/**
 * A sensor alone in its process (forked with --expose-gc by the memory test): every listener on
 * 127.0.0.1 in dry-run mode, its records counted and dropped. It sends its ports, then answers each
 * 'measure' with its memory after a full GC, the peak resident size so far and its buffered bytes.
 */
const MAX_BUFFERED = Number(process.env.SENSOR_MAX_BUFFERED ?? 16 * 1_048_576);
let records = 0;
const stdout = {
  write(s: string) {
    for (let i = s.indexOf('\n'); i >= 0; i = s.indexOf('\n', i + 1)) records++;
    return true;
  },
} as unknown as NodeJS.WritableStream;
const common = { bind: '127.0.0.1', port: 0, idle_timeout_ms: 2000 };
const sensor = await startSensor({
  config: parseSensorConfig({
    identity: { proxy_ip: '198.51.100.78' },
    domains: ['corpus.example'],
    listeners: [
      { protocol: 'http', ...common, public_port: 80, name: 'http' },
      { protocol: 'tls', ...common, public_port: 443, name: 'tls' },
      { protocol: 'dns', ...common, public_port: 53, name: 'dns', rate_per_source: 100_000, burst_per_source: 100_000 },
      { protocol: 'adb', ...common, public_port: 5555, name: 'adb' },
    ],
    spool: { dir: join(mkdtempSync(join(tmpdir(), 'umbra-corpus-child-')), 'spool') },
    health: { port: 0 },
    limits: { max_buffered_bytes: MAX_BUFFERED },
  }),
  dryRun: true,
  stdout,
  log: () => {},
});
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
process.on('message', (m: string) => {
  if (m === 'stop') {
    void sensor.stop().then(() => process.exit(0));
    return;
  }
  gc();
  gc();
  const u = process.memoryUsage();
  const h = sensor.health();
  process.send!({
    heapUsed: u.heapUsed,
    external: u.external + u.arrayBuffers,
    rss: u.rss,
    maxRss: process.resourceUsage().maxRSS * 1024,
    buffered: h.memory.buffered_bytes,
    maxBuffered: h.memory.max_buffered_bytes,
    records,
    shed: h.listeners.map((l) => `${l.name}:${l.shed}/${l.dropped}/${l.records}`).join(' '),
  });
});
process.send!({ ports: Object.fromEntries(sensor.listeners.map((l) => [l.name, l.port])) });
