import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { redactUrl, scrubSecrets } from './redact-url.ts';

describe('redactUrl', () => {
  it('should keep the path and harmless members and redact every credential-like value', () => {
    assert.equal(redactUrl('/api/v4/lookup/ip/8.8.8.8'), '/api/v4/lookup/ip/8.8.8.8');
    assert.equal(redactUrl('/api/v4/feeds/proxies/export?limit=5&cursor=abc'), '/api/v4/feeds/proxies/export?limit=5&cursor=abc');
    assert.equal(
      redactUrl('/downloads?key=exports%2Fa.parquet&expires=1700000000&kid=k1&sig=SIGVALUE&sha256=ab12'),
      '/downloads?key=[redacted]&expires=1700000000&kid=k1&sig=[redacted]&sha256=ab12',
    );
    assert.equal(
      redactUrl(
        '/o?X-Amz-Algorithm=AWS4&X-Amz-Credential=C&X-Amz-Security-Token=T&X-Amz-Signature=S&Signature=S2&access_token=A&client_secret=Z&password=P',
      ),
      '/o?X-Amz-Algorithm=AWS4&X-Amz-Credential=[redacted]&X-Amz-Security-Token=[redacted]&X-Amz-Signature=[redacted]&Signature=[redacted]&access_token=[redacted]&client_secret=[redacted]&password=[redacted]',
    );
  });

  it('should catch percent-encoded and upper-case names, repeated members and empty values', () => {
    assert.equal(redactUrl('/d?%73ig=AAA&SIG=BBB&sig=CCC&sig='), '/d?%73ig=[redacted]&SIG=[redacted]&sig=[redacted]&sig=');
    assert.equal(redactUrl('/d?%E0%A4%A=1&token=T'), '/d?%E0%A4%A=1&token=[redacted]', 'a malformed name is judged as sent');
  });

  it('should scrub URLs quoted inside free text', () => {
    assert.equal(
      scrubSecrets('Reply was already sent in the "/downloads?kid=k&sig=SECRET" route'),
      'Reply was already sent in the "/downloads?kid=k&sig=[redacted]" route',
    );
    assert.equal(scrubSecrets('no query here'), 'no query here');
  });
});
