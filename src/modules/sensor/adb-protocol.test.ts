import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { A_CNXN, A_OPEN, encodeAdb, encodeShellPacket, HEADER, readAdb, readShellPacket, SHELL_STDIN } from './adb-protocol.ts';

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

describe('the shell protocol packets', () => {
  it('should read back what it writes, wait for the rest, and refuse a length past the limit', () => {
    const p = encodeShellPacket(SHELL_STDIN, Buffer.from('id\r'));
    assert.deepEqual(readShellPacket(p), { kind: 'packet', id: SHELL_STDIN, data: Buffer.from('id\r'), used: 8 });
    assert.equal(readShellPacket(p.subarray(0, 6)).kind, 'more');
    const huge = Buffer.from([SHELL_STDIN, 0xff, 0xff, 0xff, 0xff]);
    assert.equal(readShellPacket(huge).kind, 'bad');
  });
});
