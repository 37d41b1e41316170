import { createHash, randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import {
  A_AUTH,
  A_CLSE,
  A_CNXN,
  A_OKAY,
  A_OPEN,
  A_VERSION,
  A_WRTE,
  DEVICE_BANNER,
  encodeAdb,
  encodeShellPacket,
  HEADER,
  MAX_PAYLOAD,
  readAdb,
  readShellPacket,
  SHELL_CLOSE_STDIN,
  SHELL_EXIT,
  SHELL_STDERR,
  SHELL_STDIN,
  SHELL_STDOUT,
} from '../modules/sensor/adb-protocol.ts';
import { exitStatus, fakeEntry, PROMPT, parseShellService, runFakeShell, type TtyState, ttyInput } from '../modules/sensor/adb-shell.ts';
import type { AdbListenerConfig } from '../modules/sensor/sensor-config.ts';
import type { Captured } from '../modules/sensor/sensor-records.ts';
import { newListenerStats, type RecordSink } from './http-listener.ts';
import { ConnectionGate } from './connection-gate.ts';
import type { ListenerMemory } from './memory-budget.ts';

export interface AdbListenerDeps {
  sink: RecordSink;
  now: () => number;
  /** The listener's share of the sensor's memory budget; unlimited when unset. */
  memory?: ListenerMemory;
}

/** The longest line kept from a shell without a pty (a script piped in); the rest of it is dropped. */
const PIPE_LINE_MAX = 64 * 1024;
/** The build date of the fake firmware, the mtime of its files. */
const FIRMWARE_MTIME = 1602644400;
/** `adb install` on a device with the cmd feature: the APK is streamed to this command, its size given. */
const STREAMED_INSTALL = /^exec:cmd package 'install'.* -S (\d{1,10})$/s;
/** What an open stream costs beyond its buffers (its entry and objects), so OPENs alone cannot grow memory unbounded. */
const STREAM_OVERHEAD = 256;

interface ShellStream {
  kind: 'shell';
  /** The client's id of the stream (its local-id, our remote-id). */
  peer: number;
  v2: boolean;
  pty: boolean;
  tty: TtyState;
  /** Shell protocol bytes not yet a whole packet (v2). */
  packets: Buffer;
  /** The line being read without a pty. */
  pending: Buffer;
  /** The status of the last command, for `exit` without one and the end of input. */
  code: number;
}

interface SyncStream {
  kind: 'sync';
  peer: number;
  buf: Buffer;
  /** The file being pushed (sync SEND .. DONE). */
  file?: { chunks: Buffer[]; size: number; kept: number };
}

interface InstallStream {
  kind: 'install';
  peer: number;
  /** The APK's size as the client announced it (-S). */
  expected: number;
  received: number;
  chunks: Buffer[];
  kept: number;
}

type Stream = ShellStream | SyncStream | InstallStream;

/** The 72-byte answer to STA2/LST2 (struct sync_stat_v2); `error` an errno, the rest zero then. */
function statV2(id: string, entry: ReturnType<typeof fakeEntry>, nowS: number): Buffer {
  const out = Buffer.alloc(72);
  out.write(id, 0, 'latin1');
  if (!entry) {
    out.writeUInt32LE(2, 4); // ENOENT
    return out;
  }
  const { mode, size, mtime } = statOf(entry, nowS);
  // id, error, dev (8), ino (16), mode (24), nlink (28), uid (32), gid (36), size (40), atime, mtime, ctime.
  out.writeUInt32LE(mode, 24);
  out.writeUInt32LE(entry.type === 'dir' ? 2 : 1, 28);
  out.writeBigUInt64LE(BigInt(size), 40);
  for (const at of [48, 56, 64]) out.writeBigInt64LE(BigInt(mtime), at);
  return out;
}

function statOf(entry: NonNullable<ReturnType<typeof fakeEntry>>, nowS: number) {
  return entry.type === 'dir'
    ? { mode: 0o40771, size: 4096, mtime: nowS }
    : { mode: 0o100644, size: entry.content.length, mtime: FIRMWARE_MTIME };
}

/**
 * A fake Android device on the ADB port (5555). It speaks enough of the wire protocol that the real
 * `adb` client connects (no AUTH asked) and uses it as an Android 10 phone: `adb shell <command>` and
 * an interactive `adb shell` (a pty with echo and a prompt, or a plain pipe, over the shell_v2
 * protocol or the old bare stream), `adb push`, `adb pull` and `adb ls` of a small fixed file
 * system, and `adb install`. Every command line, every pushed or installed file and every pull becomes
 * a honeypot_adb record: `session` (one per connection), `sequential_id` from 1, `command` (base64 of
 * the raw bytes), `hash` (SHA-256 hex of them). Nothing is run and nothing is written: answers come
 * from fixed tables (adb-shell.ts) and received bytes only go to the record.
 */
export class AdbHoneypot {
  readonly stats = newListenerStats();
  private readonly gate: ConnectionGate;

  constructor(
    private readonly cfg: AdbListenerConfig,
    private readonly deps: AdbListenerDeps,
  ) {
    this.gate = new ConnectionGate(cfg, this.stats, deps.memory);
  }

  createServer(): Server {
    return createServer({ noDelay: true }, (socket) => this.handle(socket));
  }

  destroyAll(): void {
    this.gate.destroyAll();
  }

  private handle(socket: Socket): void {
    const source = this.gate.admit(socket);
    if (source === undefined) return;
    const st = this.stats;
    socket.setTimeout(this.cfg.idle_timeout_ms, () => socket.destroy());
    const session = randomUUID();
    let sequence = 0;
    let nextId = 1;
    const streams = new Map<number, Stream>();
    let buf: Buffer = Buffer.alloc(0);
    // A record is in the spool file (written, not yet fsynced) before the command is answered, as an
    // HTTP request's: a kill -9 of the sensor after the answer loses nothing, and the fdatasync that
    // counts it follows without holding the session. Records are staged in the order they are made,
    // so their sequential ids reach the spool in order.
    const kept = (ok: boolean) => {
      if (ok) st.records++;
      else st.dropped++;
    };
    // The messages of one answer (OKAY, WRTE, the exit status, CLSE) leave in one write: the socket is
    // corked at the first and uncorked once the code that answers has run (a write per message was a
    // third of the listener's time).
    let corked = false;
    const uncork = () => {
      corked = false;
      socket.uncork();
    };
    const send = (command: number, a0: number, a1: number, data?: Buffer) => {
      if (socket.destroyed) return;
      if (!corked) {
        corked = true;
        socket.cork();
        process.nextTick(uncork);
      }
      socket.write(encodeAdb(command, a0, a1, data));
    };
    const record = async (bytes: Buffer): Promise<void> => {
      const json = Buffer.from(
        JSON.stringify({
          session,
          sequential_id: ++sequence,
          command: bytes.toString('base64'),
          hash: createHash('sha256').update(bytes).digest('hex'),
          timestamp: Math.floor(this.deps.now()),
          source_ip: source,
        } satisfies Captured['record']),
      );
      await this.deps.sink.append('honeypot_adb', json, kept);
    };

    const nowS = () => Math.floor(this.deps.now() / 1000);

    const onSync = async (id: number, s: SyncStream) => {
      // Sync requests: 4-byte id, 4-byte little-endian length, then that many bytes (DATA, SEND, STAT...).
      while (s.buf.length >= 8) {
        const kind = s.buf.toString('latin1', 0, 4);
        const len = s.buf.readUInt32LE(4);
        // DONE carries the file's mtime in its length field and no payload.
        const payloadLen = kind === 'DONE' || kind === 'QUIT' ? 0 : len;
        if (payloadLen > 64 * 1024 + 1024) {
          st.malformed++;
          socket.destroy();
          return;
        }
        if (s.buf.length < 8 + payloadLen) return;
        const payload = s.buf.subarray(8, 8 + payloadLen);
        s.buf = s.buf.subarray(8 + payloadLen);
        const reply = (b: Buffer) => send(A_WRTE, id, s.peer, b);
        const path = payload.toString('utf8');
        if (kind === 'STAT') {
          const entry = fakeEntry(path);
          const out = Buffer.alloc(16);
          out.write('STAT', 0, 'latin1');
          if (entry) {
            const { mode, size, mtime } = statOf(entry, nowS());
            out.writeUInt32LE(mode, 4);
            out.writeUInt32LE(size, 8);
            out.writeUInt32LE(mtime, 12);
          }
          reply(out);
        } else if (kind === 'STA2' || kind === 'LST2') {
          reply(statV2(kind, fakeEntry(path), nowS()));
        } else if (kind === 'LIST' || kind === 'LIS2') {
          const entry = fakeEntry(path);
          const v2 = kind === 'LIS2';
          const parts: Buffer[] = [];
          for (const name of entry?.type === 'dir' ? entry.names : []) {
            // Names without a table of their own: empty directories, or empty files when they have an extension.
            const child =
              fakeEntry(`${path}/${name}`) ??
              (name.includes('.') ? { type: 'file' as const, content: Buffer.alloc(0) } : { type: 'dir' as const, names: [] });
            const n = Buffer.from(name);
            if (v2) {
              const d = Buffer.alloc(76);
              statV2('DNT2', child, nowS()).copy(d);
              d.writeUInt32LE(n.length, 72);
              parts.push(d, n);
            } else {
              const { mode, size, mtime } = statOf(child, nowS());
              const d = Buffer.alloc(20);
              d.write('DENT', 0, 'latin1');
              d.writeUInt32LE(mode, 4);
              d.writeUInt32LE(size, 8);
              d.writeUInt32LE(mtime, 12);
              d.writeUInt32LE(n.length, 16);
              parts.push(d, n);
            }
          }
          const done = Buffer.alloc(v2 ? 76 : 20);
          done.write('DONE', 0, 'latin1');
          parts.push(done);
          reply(Buffer.concat(parts));
        } else if (kind === 'RECV') {
          // A pull is recorded as what was asked for: the path, after the request's name.
          await record(Buffer.from(`RECV ${path}`));
          const entry = fakeEntry(path);
          if (entry?.type !== 'file') {
            const msg = Buffer.from(entry ? 'is a directory' : 'No such file or directory');
            const out = Buffer.alloc(8);
            out.write('FAIL', 0, 'latin1');
            out.writeUInt32LE(msg.length, 4);
            reply(Buffer.concat([out, msg]));
          } else {
            const out: Buffer[] = [];
            for (let at = 0; at < entry.content.length; at += 64 * 1024) {
              const chunk = entry.content.subarray(at, at + 64 * 1024);
              const h = Buffer.alloc(8);
              h.write('DATA', 0, 'latin1');
              h.writeUInt32LE(chunk.length, 4);
              out.push(h, chunk);
            }
            const done = Buffer.alloc(8);
            done.write('DONE', 0, 'latin1');
            out.push(done);
            reply(Buffer.concat(out));
          }
        } else if (kind === 'SEND') {
          s.file = { chunks: [], size: 0, kept: 0 };
        } else if (kind === 'DATA' && s.file) {
          s.file.size += payload.length;
          const room = this.cfg.max_push_bytes - s.file.kept;
          if (room > 0) {
            const part = Buffer.from(payload.subarray(0, room));
            s.file.chunks.push(part);
            s.file.kept += part.length;
          }
        } else if (kind === 'DONE' && s.file) {
          const file = Buffer.concat(s.file.chunks);
          s.file = undefined;
          await record(file);
          const ok = Buffer.alloc(8);
          ok.write('OKAY', 0, 'latin1');
          reply(ok);
        } else if (kind === 'QUIT') {
          send(A_CLSE, id, s.peer);
          streams.delete(id);
          return;
        } else {
          st.malformed++;
          send(A_CLSE, id, s.peer);
          streams.delete(id);
          return;
        }
      }
    };

    /** Output of a shell stream: in a stdout/stderr packet with shell_v2, bare bytes without. */
    const shellOut = (id: number, s: Pick<ShellStream, 'peer' | 'v2' | 'pty'>, out: string | Buffer, fd = SHELL_STDOUT) => {
      // A pty turns \n into \r\n on output (ONLCR) and has one stream for stdout and stderr.
      const bytes = typeof out === 'string' ? Buffer.from(s.pty ? out.replace(/\n/g, '\r\n') : out) : out;
      if (bytes.length === 0) return;
      send(A_WRTE, id, s.peer, s.v2 ? encodeShellPacket(s.pty ? SHELL_STDOUT : fd, bytes) : bytes);
    };
    const shellEnd = (id: number, s: Pick<ShellStream, 'peer' | 'v2'>, code: number) => {
      if (s.v2) send(A_WRTE, id, s.peer, encodeShellPacket(SHELL_EXIT, Buffer.from([code & 0xff])));
      send(A_CLSE, id, s.peer);
      streams.delete(id);
    };
    const answer = (id: number, s: Pick<ShellStream, 'peer' | 'v2' | 'pty'>, text: string): number => {
      const r = runFakeShell(text);
      shellOut(id, s, r.stdout, SHELL_STDOUT);
      shellOut(id, s, r.stderr, SHELL_STDERR);
      return r.code;
    };

    /** One line of an interactive shell: recorded, then answered; true when the shell ended. */
    const onLine = async (id: number, s: ShellStream, line: Buffer): Promise<boolean> => {
      const text = line.toString('utf8').replace(/\r$/, '');
      if (text.trim() === '') {
        if (s.pty) shellOut(id, s, PROMPT);
        return false;
      }
      await record(line);
      if (streams.get(id) !== s) return true;
      const exit = exitStatus(text);
      if (exit !== undefined) {
        shellEnd(id, s, exit);
        return true;
      }
      s.code = answer(id, s, text);
      if (s.pty) shellOut(id, s, PROMPT);
      return false;
    };

    const onShellInput = async (id: number, s: ShellStream, bytes: Buffer) => {
      if (s.pty) {
        for (const ev of ttyInput(s.tty, bytes)) {
          if (streams.get(id) !== s) return;
          if (ev.kind === 'echo') shellOut(id, s, ev.bytes);
          else if (ev.kind === 'line') {
            if (await onLine(id, s, ev.bytes)) return;
          } else if (ev.kind === 'interrupt') {
            s.code = 130;
            shellOut(id, s, PROMPT);
          } else {
            shellEnd(id, s, s.code);
            return;
          }
        }
        return;
      }
      // No pty (a script piped in): lines end at \n, nothing is echoed, no prompt.
      let data = bytes;
      while (data.length > 0) {
        const nl = data.indexOf(10);
        const part = nl < 0 ? data : data.subarray(0, nl);
        const room = PIPE_LINE_MAX - s.pending.length;
        if (room > 0 && part.length > 0) s.pending = Buffer.concat([s.pending, part.subarray(0, room)]);
        if (nl < 0) return;
        data = data.subarray(nl + 1);
        const line = s.pending;
        s.pending = Buffer.alloc(0);
        if (await onLine(id, s, line)) return;
      }
    };

    /** The client closed its stdin (shell_v2): a last line without \n is still a command, then the shell ends. */
    const onCloseStdin = async (id: number, s: ShellStream) => {
      const last = s.pty ? Buffer.from(s.tty.line) : s.pending;
      s.pending = Buffer.alloc(0);
      s.tty.line = [];
      if (last.length > 0 && (await onLine(id, s, last))) return;
      if (streams.get(id) === s) shellEnd(id, s, s.code);
    };

    const onShellData = async (id: number, s: ShellStream, data: Buffer) => {
      if (!s.v2) return onShellInput(id, s, data);
      s.packets = s.packets.length ? Buffer.concat([s.packets, data]) : Buffer.from(data);
      for (;;) {
        const r = readShellPacket(s.packets);
        if (r.kind === 'more') return;
        if (r.kind === 'bad') {
          st.malformed++;
          shellEnd(id, s, 1);
          return;
        }
        s.packets = s.packets.subarray(r.used);
        if (r.id === SHELL_STDIN) await onShellInput(id, s, r.data);
        else if (r.id === SHELL_CLOSE_STDIN) await onCloseStdin(id, s);
        // Window size changes (and unknown ids) change nothing the fake shell prints.
        if (streams.get(id) !== s) return;
      }
    };

    const onInstall = async (id: number, s: InstallStream, data: Buffer) => {
      s.received += data.length;
      const room = this.cfg.max_push_bytes - s.kept;
      if (room > 0) {
        const part = Buffer.from(data.subarray(0, room));
        s.chunks.push(part);
        s.kept += part.length;
      }
      if (s.received < s.expected) return;
      streams.delete(id);
      await record(Buffer.concat(s.chunks));
      send(A_WRTE, id, s.peer, Buffer.from('Success\n'));
      send(A_CLSE, id, s.peer);
    };

    const onMessage = async (m: { command: number; arg0: number; arg1: number; data: Buffer }) => {
      switch (m.command) {
        case A_CNXN:
          send(A_CNXN, A_VERSION, MAX_PAYLOAD, Buffer.from(DEVICE_BANNER));
          return;
        case A_AUTH:
          // Never asked for; a client that sends it anyway is answered as if accepted.
          send(A_CNXN, A_VERSION, MAX_PAYLOAD, Buffer.from(DEVICE_BANNER));
          return;
        case A_OPEN: {
          const service = m.data.subarray(0, m.data.indexOf(0) >= 0 ? m.data.indexOf(0) : m.data.length);
          const text = service.toString('utf8');
          const id = nextId++;
          if (text === 'sync:') {
            send(A_OKAY, id, m.arg0);
            streams.set(id, { kind: 'sync', peer: m.arg0, buf: Buffer.alloc(0) });
            return;
          }
          const shell = parseShellService(text);
          if (shell && shell.command === '') {
            send(A_OKAY, id, m.arg0);
            const s: ShellStream = {
              kind: 'shell',
              peer: m.arg0,
              ...shell,
              tty: { line: [] },
              packets: Buffer.alloc(0),
              pending: Buffer.alloc(0),
              code: 0,
            };
            streams.set(id, s);
            if (s.pty) shellOut(id, s, PROMPT);
            return;
          }
          // A one-shot service: `shell:<command>`, `exec:<command>`, or any other (reboot:, tcpip:...).
          // Its OKAY waits for the record's write, so that it leaves with the answer, in one write.
          await record(Buffer.from(service));
          send(A_OKAY, id, m.arg0);
          const install = STREAMED_INSTALL.exec(text);
          if (install) {
            const s: InstallStream = { kind: 'install', peer: m.arg0, expected: Number(install[1]), received: 0, chunks: [], kept: 0 };
            streams.set(id, s);
            if (s.expected === 0) await onInstall(id, s, Buffer.alloc(0));
            return;
          }
          if (!shell) {
            send(A_CLSE, id, m.arg0);
            return;
          }
          const oneShot = { ...shell, peer: m.arg0 };
          shellEnd(id, oneShot, exitStatus(shell.command) ?? answer(id, oneShot, shell.command));
          return;
        }
        case A_WRTE: {
          const s = streams.get(m.arg1);
          send(A_OKAY, m.arg1, m.arg0);
          if (!s) return;
          if (s.kind === 'sync') {
            s.buf = s.buf.length ? Buffer.concat([s.buf, m.data]) : Buffer.from(m.data);
            await onSync(m.arg1, s);
          } else if (s.kind === 'install') await onInstall(m.arg1, s, m.data);
          else await onShellData(m.arg1, s, m.data);
          return;
        }
        case A_CLSE:
          if (streams.delete(m.arg1)) send(A_CLSE, m.arg1, m.arg0);
          return;
        case A_OKAY:
          return;
        default:
          st.malformed++;
      }
    };

    /** What the connection holds: its unread bytes, each stream's buffers and the file or APK kept so far. */
    const held = () => {
      let n = buf.length;
      for (const s of streams.values()) {
        n += STREAM_OVERHEAD;
        if (s.kind === 'shell') n += s.packets.length + s.pending.length;
        else if (s.kind === 'sync') n += s.buf.length + (s.file?.kept ?? 0);
        else n += s.kept;
      }
      return n;
    };
    let busy = false;
    const drain = async () => {
      if (busy) return;
      busy = true;
      try {
        for (;;) {
          const r = readAdb(buf);
          if (r.kind === 'more') break;
          if (r.kind === 'bad') {
            // A wrong magic, or a length up to 4 GiB: nothing more on this connection can be trusted.
            st.malformed++;
            socket.destroy();
            break;
          }
          buf = buf.subarray(r.used);
          await onMessage(r.message);
          if (!this.gate.hold(socket, held())) break;
        }
      } finally {
        busy = false;
        if (buf.length === 0) buf = Buffer.alloc(0);
      }
    };
    socket.on('data', (c: Buffer) => {
      st.bytesIn += c.length;
      // readAdb refuses lengths past MAX_PAYLOAD, so a connection never holds more than one message.
      if (buf.length + c.length > HEADER + MAX_PAYLOAD + 65_536) {
        st.malformed++;
        socket.destroy();
        return;
      }
      buf = buf.length ? Buffer.concat([buf, c]) : c;
      if (!this.gate.hold(socket, held())) return;
      // A message that breaks the handling (a bug an attacker found) ends its connection, never the sensor.
      drain().catch(() => socket.destroy());
    });
  }
}
