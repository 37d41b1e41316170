import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { ManualClock } from '../../lib/clock.ts';
import { DownloadSigner, type SigningSecret } from './download-signer.ts';

const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const DAY_S = 86_400;

describe("DownloadSigner: umbra's own download URLs", () => {
  const key = 'anonymizers/2026/11/21/anonymizers.parquet';
  const sha256 = sha(Buffer.from('the daily file'));
  const target = { key, sha256 };
  const queryOf = (url: string) => new URL(url, 'http://x').searchParams;
  const signer = (secrets: SigningSecret[] = [{ id: 'k2', secret: 'current-secret' }], clock = new ManualClock()) =>
    new DownloadSigner({ secrets, clock });

  it('should issue byte for byte the URL the embedded store issued before signing left the store', () => {
    // Made by FsObjectStore.presign before this class existed: URLs issued then stay valid after an upgrade.
    const url = signer().sign({ key, sha256: 'a'.repeat(64) }, DAY_S);
    assert.equal(
      url,
      '/downloads?object=anonymizers%2F2026%2F11%2F21%2Fanonymizers.parquet&sha256=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' +
        '&expires=1795435200&kid=k2&sig=kkIYB1s-y3wYOr4Ia_unjWWFwxzV7uTIkwdRiTrZ6Z4',
    );
    assert.ok(
      new DownloadSigner({ secrets: [{ id: 'k', secret: 's' }], clock: new ManualClock(), path: '/dl' }).sign(target, 1).startsWith('/dl?'),
    );
  });

  it('should accept a fresh URL until its expiry and refuse it one second after, returning the key and checksum it signed', () => {
    const clock = new ManualClock();
    const s = signer(undefined, clock);
    const q = queryOf(s.sign(target, DAY_S));
    assert.deepEqual(s.verify(q), { ok: true, key, sha256 });
    clock.advance(DAY_S * 1000);
    assert.deepEqual(s.verify(q), { ok: true, key, sha256 });
    clock.advance(1000);
    assert.deepEqual(s.verify(q), { ok: false, reason: 'EXPIRED' });
  });

  it('should refuse a URL with any signed member tampered with or removed, and a malformed query', () => {
    const s = signer();
    const q = queryOf(s.sign(target, DAY_S));
    const tamper = (name: string, value: string | undefined) => {
      const t = new URLSearchParams(q);
      if (value === undefined) t.delete(name);
      else t.set(name, value);
      return s.verify(t);
    };
    assert.deepEqual(tamper('object', 'anonymizers/2026/11/22/anonymizers.parquet'), { ok: false, reason: 'BAD_SIGNATURE' });
    assert.deepEqual(tamper('sha256', sha(Buffer.from('other bytes'))), { ok: false, reason: 'BAD_SIGNATURE' });
    assert.deepEqual(tamper('expires', String(Number(q.get('expires')) + 3600)), { ok: false, reason: 'BAD_SIGNATURE' });
    const sig = q.get('sig')!;
    assert.deepEqual(tamper('sig', (sig[0] === 'A' ? 'B' : 'A') + sig.slice(1)), { ok: false, reason: 'BAD_SIGNATURE' });
    assert.deepEqual(tamper('sig', sig.slice(1)), { ok: false, reason: 'BAD_SIGNATURE' });
    for (const name of ['object', 'sha256', 'expires', 'kid', 'sig'])
      assert.deepEqual(tamper(name, undefined), { ok: false, reason: 'MALFORMED' }, `without ${name}`);
    assert.deepEqual(tamper('sha256', sha256.toUpperCase()), { ok: false, reason: 'MALFORMED' });
    assert.deepEqual(tamper('object', '../secrets'), { ok: false, reason: 'MALFORMED' });
    assert.deepEqual(s.verify({ key }), { ok: false, reason: 'MALFORMED' });
    assert.throws(() => s.sign({ key, sha256: 'not-a-checksum' }, DAY_S), /SHA-256/);
    assert.throws(() => s.sign({ key: '../etc/passwd', sha256 }, DAY_S), /invalid object key/);
  });

  it('should refuse an unknown key id and accept URLs of the previous secret after rotation', () => {
    const old = signer([{ id: 'k1', secret: 'old-secret' }]);
    const rotated = signer([
      { id: 'k2', secret: 'new-secret' },
      { id: 'k1', secret: 'old-secret' },
    ]);
    const retired = signer([
      { id: 'k3', secret: 'newest' },
      { id: 'k2', secret: 'new-secret' },
    ]);
    const oldUrl = queryOf(old.sign(target, DAY_S));
    assert.equal(oldUrl.get('kid'), 'k1');
    assert.deepEqual(rotated.verify(oldUrl), { ok: true, key, sha256 }, 'previous secret still accepted');
    const newUrl = queryOf(rotated.sign(target, DAY_S));
    assert.equal(newUrl.get('kid'), 'k2');
    assert.deepEqual(rotated.verify(newUrl), { ok: true, key, sha256 });
    assert.deepEqual(old.verify(newUrl), { ok: false, reason: 'UNKNOWN_KEY_ID' });
    assert.deepEqual(retired.verify(oldUrl), { ok: false, reason: 'UNKNOWN_KEY_ID' });
    // A known id with another secret's signature is a bad signature, not a pass.
    const forged = new URLSearchParams(newUrl);
    forged.set('kid', 'k1');
    assert.deepEqual(rotated.verify(forged), { ok: false, reason: 'BAD_SIGNATURE' });
  });

  it('should need a secret', () => {
    assert.throws(() => signer([]), /at least one signing secret/);
  });
});
