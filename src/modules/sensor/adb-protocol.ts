/**
 * The Android Debug Bridge wire protocol as a device speaks it over TCP (AOSP
 * system/core/adb/protocol.txt): 24-byte little-endian headers (command, arg0, arg1, data length,
 * data checksum, command ^ 0xffffffff) followed by the data. Only what a fake device needs.
 */

export const A_CNXN = 0x4e584e43;
export const A_AUTH = 0x48545541;
export const A_OPEN = 0x4e45504f;
export const A_OKAY = 0x59414b4f;
export const A_CLSE = 0x45534c43;
export const A_WRTE = 0x45545257;
export const A_VERSION = 0x01000001;
export const MAX_PAYLOAD = 256 * 1024;
export const HEADER = 24;

export interface AdbMessage {
  command: number;
  arg0: number;
  arg1: number;
  data: Buffer;
}

/** The byte sum older clients check (protocol versions from 0x01000001 skip the check). */
const checksum = (data: Buffer): number => {
  let sum = 0;
  for (const b of data) sum = (sum + b) >>> 0;
  return sum;
};

export function encodeAdb(command: number, arg0: number, arg1: number, data: Buffer = Buffer.alloc(0)): Buffer {
  const out = Buffer.allocUnsafe(HEADER + data.length);
  out.writeUInt32LE(command, 0);
  out.writeUInt32LE(arg0 >>> 0, 4);
  out.writeUInt32LE(arg1 >>> 0, 8);
  out.writeUInt32LE(data.length, 12);
  out.writeUInt32LE(checksum(data), 16);
  out.writeUInt32LE((command ^ 0xffffffff) >>> 0, 20);
  data.copy(out, HEADER);
  return out;
}

export type AdbRead =
  /** A whole message, and how many bytes of the buffer it took. */
  | { kind: 'message'; message: AdbMessage; used: number }
  /** More bytes are needed. */
  | { kind: 'more' }
  /** Not an ADB message: a bad magic, or a length past the limit (up to 4 GiB may be claimed). */
  | { kind: 'bad'; reason: string };

/** Reads one message from the start of `buf` without trusting its length field. */
export function readAdb(buf: Buffer, maxData = MAX_PAYLOAD): AdbRead {
  if (buf.length < HEADER) return { kind: 'more' };
  const command = buf.readUInt32LE(0);
  if (buf.readUInt32LE(20) !== (command ^ 0xffffffff) >>> 0) return { kind: 'bad', reason: 'bad magic' };
  const length = buf.readUInt32LE(12);
  if (length > maxData) return { kind: 'bad', reason: `data length ${length} past ${maxData}` };
  if (buf.length < HEADER + length) return { kind: 'more' };
  return {
    kind: 'message',
    message: { command, arg0: buf.readUInt32LE(4), arg1: buf.readUInt32LE(8), data: buf.subarray(HEADER, HEADER + length) },
    used: HEADER + length,
  };
}

/**
 * What the fake device says it is (the CNXN banner). The features are those of an Android 10 adbd
 * that the device answers for: `shell_v2` (shell streams in packets with an exit status, what a client
 * uses whenever it is offered, so a device without it stands out), `cmd` (`adb install` streams the
 * APK to `cmd package install`), `stat_v2` and `ls_v2` (the sync requests STA2, LST2 and LIS2), and
 * flags that change nothing the device must answer. Not offered: `abb`/`abb_exec` (another service for
 * install) and the Android 11 sync features.
 */
export const DEVICE_FEATURES = ['shell_v2', 'cmd', 'stat_v2', 'ls_v2', 'fixed_push_mkdir', 'apex', 'fixed_push_symlink_timestamp'];
export const DEVICE_BANNER = `device::ro.product.name=starltexx;ro.product.model=SM-G960F;ro.product.device=starlte;features=${DEVICE_FEATURES.join(',')}`;

/** Stream ids of the shell protocol (shell_v2): 1-byte id, 4-byte little-endian length, data. */
export const SHELL_STDIN = 0;
export const SHELL_STDOUT = 1;
export const SHELL_STDERR = 2;
export const SHELL_EXIT = 3;
export const SHELL_CLOSE_STDIN = 4;
export const SHELL_WINDOW_SIZE = 5;
export const SHELL_HEADER = 5;

export function encodeShellPacket(id: number, data: Buffer): Buffer {
  const out = Buffer.allocUnsafe(SHELL_HEADER + data.length);
  out.writeUInt8(id, 0);
  out.writeUInt32LE(data.length, 1);
  data.copy(out, SHELL_HEADER);
  return out;
}

export type ShellPacketRead =
  | { kind: 'packet'; id: number; data: Buffer; used: number }
  | { kind: 'more' }
  | { kind: 'bad'; reason: string };

/** Reads one shell protocol packet from the start of `buf`, its length checked before it is awaited. */
export function readShellPacket(buf: Buffer, maxData = MAX_PAYLOAD): ShellPacketRead {
  if (buf.length < SHELL_HEADER) return { kind: 'more' };
  const length = buf.readUInt32LE(1);
  if (length > maxData) return { kind: 'bad', reason: `packet length ${length} past ${maxData}` };
  if (buf.length < SHELL_HEADER + length) return { kind: 'more' };
  return { kind: 'packet', id: buf[0]!, data: buf.subarray(SHELL_HEADER, SHELL_HEADER + length), used: SHELL_HEADER + length };
}
