import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { status } from '@grpc/grpc-js';
import { parseConfig } from '../../../src/config.ts';
import { readGrpcTls } from '../../../src/grpc/server.ts';
import { buildTestApp } from '../../helpers/build-test-app.ts';
import { grpcClient } from '../../helpers/grpc-client.ts';

/** A self-signed EC pair for localhost and 127.0.0.1, made by openssl (required: no silent skip). */
function selfSigned(dir: string): { certFile: string; keyFile: string } {
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        keyFile,
        '-out',
        certFile,
        '-days',
        '1',
        '-subj',
        '/CN=localhost',
        '-addext',
        'subjectAltName=DNS:localhost,IP:127.0.0.1',
      ],
      { stdio: 'pipe' },
    );
  } catch (e) {
    throw new Error(`this test needs openssl on PATH to make a self-signed certificate (apt-get install openssl): ${(e as Error).message}`);
  }
  return { certFile, keyFile };
}

describe('gRPC over TLS', () => {
  it('should serve with the certificate and key paths from configuration, and refuse plaintext clients', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-tls-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const files = selfSigned(dir);
    const config = parseConfig({ UMBRA_GRPC_TLS_CERT: files.certFile, UMBRA_GRPC_TLS_KEY: files.keyFile });
    assert.deepEqual(config.grpcTls, files);
    const app = await buildTestApp(t);
    const port = await app.grpc.listen('127.0.0.1', 0, readGrpcTls(config.grpcTls));
    const { key } = await app.team();

    const tls = grpcClient(port, { tls: { ca: readFileSync(files.certFile) } });
    t.after(() => tls.close());
    const r = await tls.unary('LookupIP', { ip_address: '8.8.8.8' }, key);
    assert.equal(r.error, undefined, r.error?.details);
    assert.equal(r.value.network.asn, 15169);

    const plain = grpcClient(port);
    t.after(() => plain.close());
    assert.equal((await plain.unary('LookupIP', { ip_address: '8.8.8.8' }, key)).error?.code, status.UNAVAILABLE);
  });

  it('should refuse a configuration with only one of the two TLS paths', () => {
    assert.throws(() => parseConfig({ UMBRA_GRPC_TLS_CERT: '/x/cert.pem' }), /set both UMBRA_GRPC_TLS_CERT and UMBRA_GRPC_TLS_KEY/);
  });
});
