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
  fakeShell,
  HEADER,
  MAX_PAYLOAD,
  readAdb,
} from '../modules/sensor/adb-protocol.ts';
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

/** What an open stream costs beyond its buffers (its entry and objects), so OPENs alone cannot grow memory unbounded. */
const STREAM_OVERHEAD = 256;

/** Directories the fake device has, for `adb push` to a directory. */
const DIRECTORIES = new Set(['/', '/data', '/data/local', '/data/local/tmp', '/sdcard', '/sdcard/Download', '/storage/emulated/0']);
const PROMPT = 'starlte:/ $ ';

interface Stream {
  /** The client's id of the stream (its local-id, our remote-id). */
  peer: number;
  kind: 'shell' | 'interactive' | 'sync';
  buf: Buffer;
  /** The file being pushed (sync SEND .. DONE). */
  file?: { chunks: Buffer[]; size: number; kept: number };
}

/**
 * A fake Android device on the ADB port (5555). It speaks enough of the wire protocol that the real
 * `adb` client connects (no AUTH asked), runs `adb shell <command>` and an interactive `adb shell`,
 * and pushes files with `adb push`. Every command line and every pushed file becomes a honeypot_adb
 * record: `session` (one per connection), `sequential_id` from 1, `command` (base64 of the raw
 * bytes), `hash` (SHA-256 hex of them). Nothing is run and nothing is written: answers come from a
 * fixed table (adb-protocol.ts fakeShell) and pushed bytes only go to the record.
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
    // Records are written in order: each waits for the one before (their sequential ids stay in order).
    let recording: Promise<void> = Promise.resolve();
    const send = (command: number, a0: number, a1: number, data?: Buffer) => {
      if (!socket.destroyed) socket.write(encodeAdb(command, a0, a1, data));
    };
    const record = (bytes: Buffer) => {
      const captured: Captured = {
        feed: 'honeypot_adb',
        record: {
          session,
          sequential_id: ++sequence,
          command: bytes.toString('base64'),
          hash: createHash('sha256').update(bytes).digest('hex'),
          timestamp: Math.floor(this.deps.now()),
          source_ip: source,
        },
      };
      recording = recording.then(async () => {
        let kept = false;
        try {
          kept = await this.deps.sink.capture(captured);
        } catch {
          kept = false;
        }
        if (kept) st.records++;
        else st.dropped++;
      });
      return recording;
    };

    const onSync = async (id: number, s: Stream) => {
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
        if (kind === 'STAT') {
          const path = payload.toString('utf8').replace(/\/+$/, '') || '/';
          const out = Buffer.alloc(16);
          out.write('STAT', 0, 'latin1');
          if (DIRECTORIES.has(path)) {
            out.writeUInt32LE(0o40771, 4);
            out.writeUInt32LE(4096, 8);
            out.writeUInt32LE(Math.floor(this.deps.now() / 1000), 12);
          }
          reply(out);
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
        } else if (kind === 'LIST' || kind === 'RECV') {
          const msg = Buffer.from('remote object does not exist');
          const out = Buffer.alloc(8 + (kind === 'RECV' ? msg.length : 12));
          if (kind === 'LIST') out.write('DONE', 0, 'latin1');
          else {
            out.write('FAIL', 0, 'latin1');
            out.writeUInt32LE(msg.length, 4);
            msg.copy(out, 8);
          }
          reply(out);
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

    const onInteractive = async (id: number, s: Stream) => {
      for (;;) {
        const nl = s.buf.findIndex((b) => b === 10 || b === 13);
        if (nl < 0) {
          if (s.buf.length > 4096) s.buf = Buffer.alloc(0);
          return;
        }
        const line = s.buf.subarray(0, nl);
        s.buf = s.buf.subarray(nl + 1);
        if (line.length === 0) continue;
        await record(Buffer.from(line));
        const text = line.toString('utf8').trim();
        if (text === 'exit') {
          send(A_CLSE, id, s.peer);
          streams.delete(id);
          return;
        }
        send(A_WRTE, id, s.peer, Buffer.from(`${text}\r\n${fakeShell(text).replace(/\n/g, '\r\n')}${PROMPT}`));
      }
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
          send(A_OKAY, id, m.arg0);
          if (text === 'shell:' || (text.startsWith('shell,') && text.endsWith(':'))) {
            streams.set(id, { peer: m.arg0, kind: 'interactive', buf: Buffer.alloc(0) });
            send(A_WRTE, id, m.arg0, Buffer.from(PROMPT));
            return;
          }
          if (text === 'sync:') {
            streams.set(id, { peer: m.arg0, kind: 'sync', buf: Buffer.alloc(0) });
            return;
          }
          // A one-shot service: `shell:<command>`, `exec:<command>`, or any other (reboot:, tcpip:...).
          await record(Buffer.from(service));
          const command = /^(?:shell(?:,[^:]*)?|exec):(.*)$/s.exec(text)?.[1];
          if (command !== undefined) send(A_WRTE, id, m.arg0, Buffer.from(fakeShell(command)));
          send(A_CLSE, id, m.arg0);
          return;
        }
        case A_WRTE: {
          const s = streams.get(m.arg1);
          send(A_OKAY, m.arg1, m.arg0);
          if (!s) return;
          s.buf = s.buf.length ? Buffer.concat([s.buf, m.data]) : Buffer.from(m.data);
          if (s.kind === 'sync') await onSync(m.arg1, s);
          else await onInteractive(m.arg1, s);
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

    /** What the connection holds: its unread bytes, each stream's buffer and the pushed file kept so far. */
    const held = () => {
      let n = buf.length;
      for (const s of streams.values()) n += STREAM_OVERHEAD + s.buf.length + (s.file?.kept ?? 0);
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
