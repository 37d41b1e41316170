import { mkdirSync } from 'node:fs';
import { readGrpcTls } from '../grpc/server.ts';
import type { Command } from 'commander';
import { API_PREFIX } from '../operations.ts';
import { action } from './context.ts';
import { buildDatasetWithProgress } from './data.ts';
import { ensureDemo } from './demo.ts';
import { operatorToken, signingKeys } from './local-secrets.ts';
import { DataDirBusy, DataDirLock } from '../storage/embedded/data-dir-lock.ts';
import { EXIT, type Output } from './output.ts';
import { youngGenerationAdvice } from '../lib/young-generation.ts';

/** Ends a serve that could not start: one line, exit code 2, nothing left running. */
function cannotStart(out: Output, message: string): never {
  out.info(`umbra: ${message}`);
  process.exit(EXIT.FAILED);
}

const hostPort = (host: string, port: number): string => `${host.includes(':') ? `[${host}]` : host}:${port}`;

const listenProblem = (what: string, flag: string, host: string, port: number, e: unknown): string => {
  const text = `${(e as Error)?.message ?? e}`;
  const inUse = (e as { code?: string })?.code === 'EADDRINUSE' || /EADDRINUSE|address already in use/i.test(text);
  return (
    `cannot listen for ${what} on ${host}:${port}: ${inUse ? 'the port is in use by another program' : text}; choose another port ` +
    `with ${flag}`
  );
};

/** `umbra serve`: builds the dataset when missing, serves HTTP, and shuts down gracefully on SIGTERM/SIGINT. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('run the service (builds the IP dataset first when it is missing)')
    .option('--demo', 'create a demo team and print its key, and run the feed simulator')
    .action(
      action(async (out, configOf, o: { demo?: boolean }) => {
        const config = configOf();
        mkdirSync(config.dataDir, { recursive: true });
        // First, before anything is written: one server per data dir.
        let lock: DataDirLock;
        try {
          lock = await DataDirLock.acquire(config.dataDir, 'serve');
        } catch (e) {
          if (e instanceof DataDirBusy)
            cannotStart(out, `${e.message}; run one server per data dir (several nodes share state only in distributed mode)`);
          throw e;
        }
        const { datasetFileProblem } = await import('../modules/dataset/dataset-reader.ts');
        const { DatasetLoader } = await import('../modules/dataset/dataset-loader.ts');
        const problem = datasetFileProblem(config.datasetFile);
        if (problem) {
          out.info(`${problem}: building it`);
          await buildDatasetWithProgress(config, out);
        }
        const { buildApp } = await import('../app.ts');
        // Loaded into the loader's shared memory, which later swaps of a rebuilt file reuse (ip-dataset.ts).
        const loader = new DatasetLoader();
        loader.reserve(config.datasetFile);
        const dataset = await loader.load(config.datasetFile);
        const token = operatorToken(config, true);
        const app = await buildApp(
          { ...config, operatorToken: token, signingKeys: signingKeys(config) },
          {
            dataset,
            datasetFile: config.datasetFile,
            datasetLoader: loader,
            defaultMetrics: true,
            simulate: Boolean(o.demo),
            exportJobs: config.exportJobs,
            exportRetryMs: config.exportRetryMs,
          },
        );
        const tls = readGrpcTls(config.grpcTls);
        const failStart = async (message: string): Promise<never> => {
          await app.close().catch(() => {});
          lock.release();
          cannotStart(out, message);
        };
        // Both listeners before anything says "serving": a port in use ends the process, never half of it.
        await app.http
          .listen({ port: config.httpPort, host: config.host })
          .catch((e) => failStart(listenProblem('HTTP', '--http-port (UMBRA_HTTP_PORT)', config.host, config.httpPort, e)));
        const grpcPort = await app.grpc
          .listen(config.host, config.grpcPort, tls)
          .catch((e) => failStart(listenProblem('gRPC', '--grpc-port (UMBRA_GRPC_PORT)', config.host, config.grpcPort, e)));
        const port = (app.http.server.address() as { port: number }).port;
        const base = `http://${hostPort(config.host, port)}`;
        // Where CLI verbs on this data dir reach this server (a wildcard listen is reached on loopback).
        const local = config.host === '0.0.0.0' ? '127.0.0.1' : config.host === '::' ? '::1' : config.host;
        lock.update({ http: `http://${hostPort(local, port)}`, grpc: hostPort(local, grpcPort) });
        out.info(`umbra is serving ${base}${API_PREFIX} (data dir ${config.dataDir}); API reference at ${base}${API_PREFIX}/docs`);
        out.info(`gRPC example.v1.ExampleService on ${config.host}:${grpcPort} (${tls ? 'TLS' : 'plaintext'}; reflection enabled)`);
        out.info(
          `operator ingestion: POST ${base}/internal/v1/ingest/{feed} with the token in ` +
            `${config.operatorToken ? 'UMBRA_OPERATOR_TOKEN' : config.operatorTokenFile}, or 'umbra ingest FEED FILE'`,
        );
        const advice = youngGenerationAdvice(process.execArgv, process.env.NODE_OPTIONS);
        if (advice) out.info(advice);
        if (app.simulator)
          out.info(`demo: the simulator publishes records for all eight feeds (UMBRA_SIMULATOR_RATE=${config.simulatorRate})`);
        if (o.demo) {
          const key = await ensureDemo(app.services, config.dataDir);
          out.info(`demo API key (every scope): ${key}`);
          out.info(`try: curl -s -H 'x-api-key: ${key}' ${base}${API_PREFIX}/lookup/ip/8.8.8.8`);
        }
        await new Promise<void>((resolve) => {
          const stop = (signal: string) => {
            out.info(`${signal}: finishing in-flight requests, then stopping`);
            const force = setTimeout(() => {
              out.info('grace period over; stopping now');
              process.exit(1);
            }, config.shutdownGraceSeconds * 1000);
            force.unref();
            app
              .close()
              .then(resolve, resolve)
              .finally(() => lock.release());
          };
          // A rebuilt dataset is noticed within seconds anyway; SIGHUP asks for the check now.
          process.on('SIGHUP', () => {
            out.info('SIGHUP: checking the IP dataset file for a rebuild');
            void app.reloadDataset();
          });
          process.once('SIGTERM', () => stop('SIGTERM'));
          process.once('SIGINT', () => stop('SIGINT'));
        });
      }),
    );
}
