import { Command, CommanderError } from 'commander';
import { registerAdmin } from './admin.ts';
import { outcome } from './context.ts';
import { registerData } from './data.ts';
import { EXIT } from './output.ts';
import { registerServe } from './serve.ts';
import { registerIngest } from './ingest.ts';
import { registerExports } from './exports.ts';
import { registerMigrate } from './migrate.ts';
import { registerSensor } from './sensor.ts';
import { VERSION } from '../version.ts';

/** Entry of the `umbra` command; returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const program = new Command('umbra')
    .description('umbra: self-hostable anonymized-traffic intelligence service')
    .version(VERSION, '-V, --version', 'print the version and exit')
    .option('--json', 'machine-readable result on stdout (messages stay on stderr)')
    .option('--data-dir <dir>', 'state directory (env UMBRA_DATA_DIR, default ./data)')
    .option('--http-port <port>', 'HTTP port (env UMBRA_HTTP_PORT, default 8080)')
    .option('--grpc-port <port>', 'gRPC port (env UMBRA_GRPC_PORT, default 50051)')
    .option('--grpc-tls-cert <file>', 'PEM certificate chain for gRPC over TLS (env UMBRA_GRPC_TLS_CERT; plaintext when unset)')
    .option('--grpc-tls-key <file>', 'PEM private key for gRPC over TLS (env UMBRA_GRPC_TLS_KEY)')
    .option('--host <host>', 'listen address (env UMBRA_HOST, default 127.0.0.1)')
    .showHelpAfterError()
    .exitOverride();
  registerServe(program);
  registerAdmin(program);
  registerData(program);
  registerIngest(program);
  registerExports(program);
  registerMigrate(program);
  registerSensor(program);
  program.commands.forEach(function deep(c: Command) {
    c.exitOverride();
    c.commands.forEach(deep);
  });
  outcome.code = EXIT.OK;
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (e) {
    // Help and version exit 0; every other parse failure is a usage error.
    if (e instanceof CommanderError) return e.exitCode === 0 ? EXIT.OK : EXIT.FAILED;
    throw e;
  }
  return outcome.code;
}
