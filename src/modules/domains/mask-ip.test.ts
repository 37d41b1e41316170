import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { maskIp } from './mask-ip.ts';

describe('maskIp', () => {
  it('should replace the last IPv4 octet', () => {
    assert.equal(maskIp('203.0.113.7'), '203.0.113.x');
    assert.equal(maskIp('0.0.0.0'), '0.0.0.x');
    assert.equal(maskIp('::ffff:198.51.100.9'), '198.51.100.x');
  });

  it('should replace the last group of the canonical IPv6 text', () => {
    const cases: Array<[string, string]> = [
      ['2001:db8::1', '2001:db8::x'],
      ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2:3:4:5:x'],
      ['2001:DB8:0001:0002:0003:0004:0005:0006', '2001:db8:1:2:3:4:5:x'],
      ['2001:db8::', '2001:db8::x'],
      ['::', '::x'],
      ['::1', '::x'],
      ['1::', '1::x'],
      ['1:0:0:0:0:0:0:1', '1::x'],
      ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:x'],
      ['1:0:0:2:0:0:0:0', '1:0:0:2::x'],
      ['1:2:3:4:5:6:0:7', '1:2:3:4:5:6:0:x'],
      ['0:1:2:3:4:5:6:7', '0:1:2:3:4:5:6:x'],
      ['fe80::1:2', 'fe80::1:x'],
    ];
    for (const [ip, masked] of cases) assert.equal(maskIp(ip), masked, ip);
  });

  it('should never echo input it cannot parse', () => {
    for (const bad of ['', 'example.com', '1.2.3', '2001:db8::1%eth0', '1.2.3.04']) assert.equal(maskIp(bad), 'x', bad);
  });
});
