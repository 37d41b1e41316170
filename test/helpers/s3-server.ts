import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
}
type S3rverClass = new (opts: {
  address: string;
  port: number;
  silent: boolean;
  directory: string;
  configureBuckets: Array<{ name: string }>;
}) => S3rverInstance;

/** s3rver's only account: it refuses any other access key id (it does not check SigV4 signatures). */
export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface TestS3 {
  endpoint: string;
  bucket: string;
  credentials: typeof S3RVER_CREDENTIALS;
  close(): Promise<void>;
}

/**
 * An in-process S3 server (s3rver) on a random port of 127.0.0.1, storing in a temp dir, with one
 * bucket made for this run. It enforces presigned URLs' expiry but not their signatures.
 */
export async function startS3Server(bucket = 'umbra-test'): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'umbra-s3rver-'));
  // CommonJS without type declarations.
  const S3rver = createRequire(import.meta.url)('s3rver') as S3rverClass;
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    bucket,
    credentials: S3RVER_CREDENTIALS,
    close: async () => {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
