import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ConfigError, parseConfig } from './config.ts';

const DISTRIBUTED = {
  UMBRA_STORAGE: 'distributed',
  DATABASE_URL: 'postgres://umbra@db.internal:5432/umbra',
  REDIS_URL: 'redis://cache.internal:6379',
  NATS_URL: 'nats://bus.internal:4222',
  S3_ENDPOINT: 'https://s3.internal',
  S3_BUCKET: 'umbra-exports',
  S3_REGION: 'eu-west-1',
  S3_ACCESS_KEY_ID: 'AKIAEXAMPLE',
  S3_SECRET_ACCESS_KEY: 'secret-example-value',
  UMBRA_SIGNING_KEYS: 'k1:0123456789abcdef0123',
  UMBRA_OPERATOR_TOKEN: 'operator-token-0123456789',
};

describe('configuration', () => {
  it('should default to the embedded mode with no engines', () => {
    const c = parseConfig({});
    assert.equal(c.storage, 'embedded');
    assert.equal(c.distributed, undefined);
  });

  it('should take every engine of distributed mode from the environment', () => {
    const c = parseConfig({ ...DISTRIBUTED, UMBRA_NODE_ID: 'node-a', S3_FORCE_PATH_STYLE: 'true', UMBRA_DOWNLOADS: 'umbra' });
    assert.equal(c.storage, 'distributed');
    assert.deepEqual(c.distributed, {
      databaseUrl: DISTRIBUTED.DATABASE_URL,
      dbSchema: 'public',
      redisUrl: DISTRIBUTED.REDIS_URL,
      redisPrefix: 'umbra:',
      natsUrl: DISTRIBUTED.NATS_URL,
      natsPrefix: 'UMBRA',
      natsReplicas: 1,
      s3: {
        endpoint: 'https://s3.internal',
        publicEndpoint: undefined,
        bucket: 'umbra-exports',
        region: 'eu-west-1',
        credentials: { accessKeyId: 'AKIAEXAMPLE', secretAccessKey: 'secret-example-value' },
        forcePathStyle: true,
        prefix: '',
      },
      downloads: 'umbra',
      nodeId: 'node-a',
      creditBlock: 200,
      ratePrefetch: 0.02,
    });
    assert.equal(parseConfig({ ...DISTRIBUTED, UMBRA_RATE_PREFETCH: '0' }).distributed!.ratePrefetch, 0, 'prefetch can be turned off');
    assert.throws(() => parseConfig({ ...DISTRIBUTED, UMBRA_RATE_PREFETCH: '0.5' }), /UMBRA_RATE_PREFETCH/);
  });

  it('should give each process a node id of its own when none is set, even with the host name and pid of another', () => {
    const a = parseConfig(DISTRIBUTED).distributed!.nodeId;
    const b = parseConfig(DISTRIBUTED).distributed!.nodeId;
    assert.notEqual(a, b);
    assert.ok(a.startsWith(`${hostname()}-${process.pid}-`), a);
  });

  it('should name every missing engine and shared secret at once', () => {
    assert.throws(
      () => parseConfig({ UMBRA_STORAGE: 'distributed', REDIS_URL: DISTRIBUTED.REDIS_URL }),
      (e: Error) => {
        assert.ok(e instanceof ConfigError);
        for (const k of ['DATABASE_URL', 'NATS_URL', 'S3_BUCKET', 'UMBRA_SIGNING_KEYS', 'UMBRA_OPERATOR_TOKEN'])
          assert.match(e.message, new RegExp(`${k}: required when UMBRA_STORAGE=distributed`));
        assert.doesNotMatch(e.message, /REDIS_URL/);
        return true;
      },
    );
    assert.throws(
      () => parseConfig({ ...DISTRIBUTED, S3_SECRET_ACCESS_KEY: undefined }),
      /set both S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY/,
    );
    assert.throws(() => parseConfig({ ...DISTRIBUTED, UMBRA_DB_SCHEMA: 'Robert"; DROP' }), /UMBRA_DB_SCHEMA/);
  });

  it('should read one JSON file of the same settings, which the environment overrides', () => {
    const dir = mkdtempSync(join(tmpdir(), 'umbra-config-'));
    try {
      const file = join(dir, 'umbra.json');
      writeFileSync(file, JSON.stringify({ ...DISTRIBUTED, UMBRA_CREDIT_BLOCK: 500, UMBRA_HTTP_PORT: 9000 }));
      const c = parseConfig({ UMBRA_CONFIG: file, UMBRA_HTTP_PORT: '9100' });
      assert.equal(c.storage, 'distributed');
      assert.equal(c.distributed?.creditBlock, 500);
      assert.equal(c.httpPort, 9100, 'the environment wins over the file');
      writeFileSync(file, JSON.stringify({ UMBRA_STORAGE: 'distributed', DATABSE_URL: 'x' }));
      assert.throws(() => parseConfig({ UMBRA_CONFIG: file }), /unknown setting DATABSE_URL/);
      writeFileSync(file, '{ not json');
      assert.throws(() => parseConfig({ UMBRA_CONFIG: file }), /UMBRA_CONFIG: cannot read/);
      assert.throws(() => parseConfig({ UMBRA_CONFIG: join(dir, 'missing.json') }), /UMBRA_CONFIG: cannot read/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should take a public base URL, absolute http(s), and drop its trailing slash whether or not it has a path prefix', () => {
    assert.equal(parseConfig({}).publicUrl, undefined);
    for (const [given, want] of [
      ['https://intel.example.com', 'https://intel.example.com'],
      ['https://intel.example.com/', 'https://intel.example.com'],
      ['https://x.example/umbra', 'https://x.example/umbra'],
      ['https://x.example/umbra/', 'https://x.example/umbra'],
      ['http://10.0.0.5:8080//', 'http://10.0.0.5:8080'],
      ['HTTPS://Intel.Example.COM:443/Umbra/', 'https://intel.example.com/Umbra'],
    ])
      assert.equal(parseConfig({ UMBRA_PUBLIC_URL: given }).publicUrl, want, given);
  });

  it('should refuse a public base URL that is relative, not http(s), or has a query, fragment or credentials, naming the setting', () => {
    for (const bad of [
      'intel.example.com',
      '/umbra',
      'ftp://intel.example.com',
      'https://x.example/?a=1',
      'https://x.example/#top',
      'https://x.example?',
      'https://u:p@x.example',
      '',
    ])
      assert.throws(
        () => parseConfig({ UMBRA_PUBLIC_URL: bad }),
        (e: Error) => e instanceof ConfigError && /UMBRA_PUBLIC_URL: must/.test(e.message),
        JSON.stringify(bad),
      );
  });
});
