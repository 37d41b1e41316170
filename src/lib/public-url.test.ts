import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { absoluteUrl, grpcBase, httpBase, parseAuthority } from './public-url.ts';

const PATH = '/downloads?object=a%2Fb.parquet&sig=x';

describe('public URLs', () => {
  it('should append a path under a base, keeping its path prefix, and leave absolute URLs as they are', () => {
    assert.equal(absoluteUrl('https://intel.example.com', PATH), `https://intel.example.com${PATH}`);
    assert.equal(absoluteUrl('https://x.example/umbra', PATH), `https://x.example/umbra${PATH}`);
    assert.equal(absoluteUrl('https://x.example/umbra/', PATH), `https://x.example/umbra${PATH}`);
    const presigned = 'https://bucket.s3.eu-west-1.amazonaws.com/a/b.parquet?X-Amz-Signature=abc';
    assert.equal(absoluteUrl('https://x.example/umbra', presigned), presigned);
    assert.throws(() => absoluteUrl('https://x.example', 'downloads?x'), /not a path from the root/);
    assert.throws(() => absoluteUrl('https://x.example', '//evil.example/x'), /not a path from the root/);
  });

  it('should accept only a plain host[:port] as an authority', () => {
    assert.deepEqual(parseAuthority('Intel.Example.com:8443'), { host: 'intel.example.com', port: 8443 });
    assert.deepEqual(parseAuthority('10.0.0.5'), { host: '10.0.0.5', port: undefined });
    assert.deepEqual(parseAuthority('[::1]:50051'), { host: '[::1]', port: 50051 });
    for (const bad of [
      undefined,
      '',
      'user@host',
      'host/path',
      'host:99999',
      'host:0',
      'a b',
      'evil.example\r\nx: y',
      '-host',
      'host:',
      '::1',
    ])
      assert.equal(parseAuthority(bad), undefined, JSON.stringify(bad));
  });

  it('should base HTTP answers on UMBRA_PUBLIC_URL, else on the Host asked for, else on the address the connection reached', () => {
    const local = { address: '10.1.2.3', port: 8080 };
    assert.equal(
      httpBase({ publicUrl: 'https://x.example/umbra', scheme: 'http', host: 'internal:8080', local }),
      'https://x.example/umbra',
    );
    assert.equal(
      httpBase({ publicUrl: undefined, scheme: 'http', host: 'intel.example.com:8080', local }),
      'http://intel.example.com:8080',
    );
    assert.equal(httpBase({ publicUrl: undefined, scheme: 'https', host: 'intel.example.com', local }), 'https://intel.example.com');
    assert.equal(httpBase({ publicUrl: undefined, scheme: 'http', host: 'evil/x', local }), 'http://10.1.2.3:8080');
    assert.equal(
      httpBase({ publicUrl: undefined, scheme: 'http', host: undefined, local: { address: '::1', port: 80 } }),
      'http://[::1]:80',
    );
  });

  it("should base gRPC answers on UMBRA_PUBLIC_URL, else on the :authority's host with the HTTP port", () => {
    const o = { publicUrl: undefined, httpPort: 8080, listenHost: '0.0.0.0' };
    assert.equal(grpcBase({ ...o, publicUrl: 'https://x.example/umbra', authority: 'intel:50051' }), 'https://x.example/umbra');
    assert.equal(grpcBase({ ...o, authority: 'intel.example.com:50051' }), 'http://intel.example.com:8080');
    assert.equal(grpcBase({ ...o, authority: '[::1]:50051' }), 'http://[::1]:8080');
    assert.equal(grpcBase({ ...o, authority: 'not an authority' }), 'http://127.0.0.1:8080');
    assert.equal(grpcBase({ ...o, authority: undefined, listenHost: '::' }), 'http://[::1]:8080');
  });
});
