import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { headEnd, parseHttpHead } from './http-head.ts';

const b = (s: string) => Buffer.from(s, 'latin1');

describe('the lenient HTTP head reader', () => {
  it('should find the end of a head with CRLF or bare LF, and not before it is complete', () => {
    assert.equal(headEnd(b('GET / HTTP/1.1\r\nHost: a\r\n\r\nBODY')), 27);
    assert.equal(headEnd(b('GET / HTTP/1.1\nHost: a\n\nBODY')), 24);
    assert.equal(headEnd(b('GET / HTTP/1.1\r\nHost: a\r\n')), -1);
  });

  it('should read a well-formed request: method, target, version, headers as spelled, length and keep-alive', () => {
    const h = parseHttpHead(b('POST /x?a=1 HTTP/1.1\r\nHost: example.com\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\n'));
    assert.deepEqual(h, {
      method: 'POST',
      uri: '/x?a=1',
      version: 'HTTP/1.1',
      headers: { Host: 'example.com', 'Content-Length': '5', 'X-A': '1, 2' },
      contentLength: 5,
      chunked: false,
      close: false,
      malformed: false,
    });
  });

  it('should keep what parses of a malformed head and say it is malformed', () => {
    const h = parseHttpHead(b('GARBAGE\r\nno colon here\r\n: empty name\r\nHost: a.example\r\n\r\n'));
    assert.equal(h.method, 'GARBAGE');
    assert.equal(h.uri, '');
    assert.deepEqual(h.headers, { Host: 'a.example' });
    assert.equal(h.malformed, true);
    const bad = parseHttpHead(b('GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n'));
    assert.equal(bad.contentLength, undefined);
    assert.equal(bad.malformed, true);
    // Bytes that are not text stay one character per byte (recoverable), never an exception.
    const bin = parseHttpHead(Buffer.from([0x16, 0x03, 0x01, 0x00, 0xff, 0x0a, 0x0a]));
    assert.equal(bin.method, '\x16\x03\x01\x00\xff');
    assert.equal(bin.malformed, true);
  });

  it('should close after HTTP/1.0 without keep-alive, or when asked, and see chunked bodies', () => {
    assert.equal(parseHttpHead(b('GET / HTTP/1.0\r\n\r\n')).close, true);
    assert.equal(parseHttpHead(b('GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n')).close, false);
    assert.equal(parseHttpHead(b('GET / HTTP/1.1\r\nConnection: close\r\n\r\n')).close, true);
    assert.equal(parseHttpHead(b('POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n')).chunked, true);
  });

  it('should cut fields to the feed schema lengths', () => {
    const h = parseHttpHead(b(`${'M'.repeat(100)} /${'u'.repeat(20_000)} HTTP/1.1\r\n\r\n`));
    assert.equal(h.method.length, 32);
    assert.equal(h.uri.length, 16_384);
  });
});
