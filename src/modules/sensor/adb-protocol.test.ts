import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { A_CNXN, A_OPEN, encodeAdb, fakeShell, HEADER, readAdb } from './adb-protocol.ts';

describe('the ADB wire codec', () => {
  it('should read back what it writes, and wait for the rest of a message', () => {
    const msg = encodeAdb(A_OPEN, 7, 0, Buffer.from('shell:id\0'));
    const r = readAdb(msg);
    assert.equal(r.kind, 'message');
    if (r.kind !== 'message') return;
    assert.deepEqual([r.message.command, r.message.arg0, r.message.data.toString(), r.used], [A_OPEN, 7, 'shell:id\0', msg.length]);
    assert.equal(readAdb(msg.subarray(0, HEADER + 3)).kind, 'more');
    assert.equal(readAdb(msg.subarray(0, 10)).kind, 'more');
  });

  it('should refuse a wrong magic and a length up to 4 GiB without waiting for the bytes it claims', () => {
    const bad = encodeAdb(A_CNXN, 0x01000001, 4096);
    bad.writeUInt32LE(0, 20);
    assert.deepEqual(readAdb(bad), { kind: 'bad', reason: 'bad magic' });
    const huge = encodeAdb(A_CNXN, 0x01000001, 4096);
    huge.writeUInt32LE(0xffffffff, 12);
    assert.equal(readAdb(huge).kind, 'bad');
  });
});

describe('the fake device shell', () => {
  it('should answer the usual probes and run nothing', () => {
    assert.match(fakeShell('id'), /^uid=2000\(shell\)/);
    assert.equal(fakeShell('echo hello  world'), 'hello world\n');
    assert.equal(fakeShell('getprop ro.product.model'), 'SM-G960F\n');
    assert.match(fakeShell('ls'), /\nsystem\n/);
    assert.equal(fakeShell('wget http://x/y.sh'), '/system/bin/sh: wget: not found\n');
    assert.equal(fakeShell('   '), '');
  });
});
