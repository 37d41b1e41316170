import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { parse as parseYaml } from 'yaml';
import { parseSensorConfig, SensorConfigError, type SensorConfig } from '../modules/sensor/sensor-config.ts';
import { startSensor } from '../sensor/sensor.ts';
import { action } from './context.ts';
import { UsageError, wholeArg } from './output.ts';

interface SensorFlags {
  config?: string;
  server?: string;
  tokenFile?: string;
  dryRun?: boolean;
  spoolDir?: string;
  healthPort?: string;
  healthBind?: string;
  tunnelId?: string;
  poolId?: string;
  provider?: string;
  proxyIp?: string;
  domain?: string[];
  http?: string[];
  tls?: string[];
  dns?: string[];
  dot?: string[];
  adb?: string[];
}

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** `--http [BIND:]PORT[=PUBLIC]` (and --tls): 8080=80, 0.0.0.0:8080=80, [::]:8080. */
export function listenerFlag(protocol: 'http' | 'tls' | 'dns' | 'dot' | 'adb', spec: string): Record<string, unknown> {
  const m = /^(?:(\[[0-9a-fA-F:.]+\]|[0-9.]+):)?(\d{1,5})(?:=(\d{1,5}))?$/.exec(spec.trim());
  if (!m) throw new UsageError(`--${protocol} ${spec}: expected [BIND:]PORT[=PUBLIC_PORT], e.g. 8080=80 or 0.0.0.0:8080=80`);
  return {
    // DNS over TLS is a DNS listener with tls on.
    ...(protocol === 'dot' ? { protocol: 'dns', tls: true } : { protocol }),
    ...(m[1] ? { bind: m[1].replace(/^\[|\]$/g, '') } : {}),
    port: Number(m[2]),
    ...(m[3] ? { public_port: Number(m[3]) } : {}),
  };
}

/** The config file (YAML; JSON is YAML too) with the flags applied over it. */
export function sensorConfigFrom(flags: SensorFlags, readFile: (f: string) => string = (f) => readFileSync(f, 'utf8')): SensorConfig {
  let base: Record<string, unknown> = {};
  if (flags.config) {
    let text: string;
    try {
      text = readFile(flags.config);
    } catch (e) {
      throw new UsageError(`cannot read ${flags.config}: ${(e as Error).message}`);
    }
    let doc: unknown;
    try {
      doc = parseYaml(text, { maxAliasCount: 100 });
    } catch (e) {
      throw new UsageError(`${flags.config} is not valid YAML: ${(e as Error).message}`);
    }
    if (doc !== null && doc !== undefined && (typeof doc !== 'object' || Array.isArray(doc)))
      throw new UsageError(`${flags.config} must hold a mapping (server:, identity:, domains:, listeners: ...)`);
    base = (doc ?? {}) as Record<string, unknown>;
  }
  const c: Record<string, unknown> = { ...base };
  const sub = (k: string) => ({ ...((c[k] as Record<string, unknown> | undefined) ?? {}) });
  if (flags.server) c.server = flags.server;
  if (flags.tokenFile) c.token_file = flags.tokenFile;
  if (flags.spoolDir) c.spool = { ...sub('spool'), dir: flags.spoolDir };
  if (flags.healthPort !== undefined || flags.healthBind !== undefined)
    c.health = {
      ...sub('health'),
      ...(flags.healthPort !== undefined ? { port: wholeArg('health-port', flags.healthPort) } : {}),
      ...(flags.healthBind !== undefined ? { bind: flags.healthBind } : {}),
    };
  const id = sub('identity');
  if (flags.tunnelId !== undefined) id.tunnel_id = wholeArg('tunnel-id', flags.tunnelId);
  if (flags.poolId !== undefined) id.pool_id = flags.poolId;
  if (flags.provider !== undefined) id.provider = flags.provider;
  if (flags.proxyIp !== undefined) id.proxy_ip = flags.proxyIp;
  c.identity = id;
  if (flags.domain?.length) c.domains = flags.domain;
  if (flags.http?.length || flags.tls?.length || flags.dns?.length || flags.dot?.length || flags.adb?.length)
    c.listeners = [
      ...(flags.http ?? []).map((f) => listenerFlag('http', f)),
      ...(flags.tls ?? []).map((f) => listenerFlag('tls', f)),
      ...(flags.dns ?? []).map((f) => listenerFlag('dns', f)),
      ...(flags.dot ?? []).map((f) => listenerFlag('dot', f)),
      ...(flags.adb ?? []).map((f) => listenerFlag('adb', f)),
    ];
  try {
    return parseSensorConfig(c);
  } catch (e) {
    if (e instanceof SensorConfigError) throw new UsageError(e.message);
    throw e;
  }
}

/** The operator token: UMBRA_OPERATOR_TOKEN, else the first line of token_file. */
function tokenOf(config: SensorConfig): string | undefined {
  const env = process.env.UMBRA_OPERATOR_TOKEN?.trim();
  if (env) return env;
  if (!config.token_file) return undefined;
  try {
    return readFileSync(config.token_file, 'utf8').split('\n')[0]!.trim() || undefined;
  } catch (e) {
    throw new UsageError(`cannot read the token file ${config.token_file}: ${(e as Error).message}`);
  }
}

/** `umbra sensor`: runs honeypot listeners that feed an umbra server, until SIGTERM or SIGINT. */
export function registerSensor(program: Command): void {
  program
    .command('sensor')
    .description('run honeypot listeners (HTTP, TLS, DNS, ADB) and send what they capture to an umbra server (docs/sensors.md)')
    .option('--config <file>', 'YAML config (deploy/sensor.sample.yaml lists every option and its default)')
    .option('--server <url>', 'the umbra server records go to (default http://127.0.0.1:8080)')
    .option('--token-file <file>', 'a file holding the operator token (default: env UMBRA_OPERATOR_TOKEN)')
    .option('--dry-run', 'print records to stdout as NDJSON instead of uploading them')
    .option('--spool-dir <dir>', 'the on-disk queue (default ./sensor-spool)')
    .option('--health-port <port>', 'port of /health and /metrics (default 9465; 0 picks one)')
    .option('--health-bind <address>', 'address of /health and /metrics (default 127.0.0.1)')
    .option('--tunnel-id <n>', 'identity: tunnel id (default 0)')
    .option('--pool-id <id>', 'identity: pool id (default "default")')
    .option('--provider <name>', 'identity: provider (default SELF_HOSTED)')
    .option('--proxy-ip <address>', 'identity: the public address attackers reach the sensor at')
    .option('--domain <name>', 'a decoy domain (repeat for more; the first is the default)', collect)
    .option(
      '--http <spec>',
      "an HTTP listener [BIND:]PORT[=PUBLIC_PORT] (repeat for more; with --tls, replaces the config file's listeners)",
      collect,
    )
    .option('--tls <spec>', 'a TLS listener [BIND:]PORT[=PUBLIC_PORT] (repeat for more)', collect)
    .option('--adb <spec>', 'an ADB listener (a fake Android device) [BIND:]PORT[=PUBLIC_PORT]', collect)
    .option('--dns <spec>', 'a DNS listener over UDP and TCP [BIND:]PORT[=PUBLIC_PORT], public port 53, 853 or 5353', collect)
    .option('--dot <spec>', 'a DNS over TLS listener [BIND:]PORT[=PUBLIC_PORT], public port 853', collect)
    .action(
      action(async (out, _config, flags: SensorFlags) => {
        const config = sensorConfigFrom(flags);
        const dryRun = Boolean(flags.dryRun);
        const token = dryRun ? undefined : tokenOf(config);
        if (!dryRun && !token)
          throw new UsageError('no operator token: set UMBRA_OPERATOR_TOKEN or token_file / --token-file (or try --dry-run)');
        const log = (m: string) => out.info(`umbra sensor: ${m}`);
        const sensor = await startSensor({ config, token, dryRun, log });
        for (const l of sensor.listeners)
          log(
            `${l.name} (${l.protocol}) listening on ${l.bind.includes(':') ? `[${l.bind}]` : l.bind}:${l.port}, public port ${l.publicPort}`,
          );
        log(
          `health on http://${config.health.bind.includes(':') ? `[${config.health.bind}]` : config.health.bind}:${sensor.healthPort}/health`,
        );
        log(dryRun ? 'dry run: records go to stdout, nothing is uploaded' : `uploading to ${config.server}`);
        await new Promise<void>((resolve) => {
          const stop = (signal: string) => {
            log(`${signal}: stopping (spooled records stay for the next start)`);
            void sensor.stop().then(resolve, resolve);
          };
          process.once('SIGTERM', () => stop('SIGTERM'));
          process.once('SIGINT', () => stop('SIGINT'));
        });
      }),
    );
}
