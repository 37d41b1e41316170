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

/** What the fake device says it is (the CNXN banner); no shell_v2 or stat_v2, so clients use the plain services. */
export const DEVICE_BANNER = 'device::ro.product.name=sdm845;ro.product.model=SM-G960F;ro.product.device=starlte;features=cmd\0';

const PROPS: Record<string, string> = {
  'ro.product.model': 'SM-G960F',
  'ro.product.brand': 'samsung',
  'ro.product.name': 'starltexx',
  'ro.product.device': 'starlte',
  'ro.product.manufacturer': 'samsung',
  'ro.build.version.release': '10',
  'ro.build.version.sdk': '29',
  'ro.product.cpu.abi': 'arm64-v8a',
  'ro.build.fingerprint': 'samsung/starltexx/starlte:10/QP1A.190711.020/G960FXXSHFUJ2:user/release-keys',
  'ro.secure': '1',
  'ro.debuggable': '0',
  'persist.sys.usb.config': 'adb',
};

const LS_ROOT = [
  'acct',
  'apex',
  'bin',
  'cache',
  'config',
  'd',
  'data',
  'debug_ramdisk',
  'dev',
  'etc',
  'init',
  'init.rc',
  'mnt',
  'odm',
  'oem',
  'proc',
  'product',
  'sbin',
  'sdcard',
  'storage',
  'sys',
  'system',
  'vendor',
];

/**
 * What the fake device's shell prints for a command line. Nothing is run: the first words are
 * matched against a few answers a probe expects, anything else is "not found".
 */
export function fakeShell(line: string): string {
  const words = line.trim().split(/\s+/).filter(Boolean);
  const [cmd, ...args] = words;
  switch (cmd) {
    case undefined:
      return '';
    case 'id':
      return 'uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),1015(sdcard_rw),3003(inet) context=u:r:shell:s0\n';
    case 'whoami':
      return 'shell\n';
    case 'pwd':
      return '/\n';
    case 'echo':
      return `${args.join(' ')}\n`;
    case 'uname':
      return args.includes('-a') ? 'Linux localhost 4.9.186-17977470 #1 SMP PREEMPT Wed Oct 14 11:51:30 KST 2020 aarch64\n' : 'Linux\n';
    case 'getprop':
      if (args[0]) return `${PROPS[args[0]] ?? ''}\n`;
      return Object.entries(PROPS)
        .map(([k, v]) => `[${k}]: [${v}]\n`)
        .join('');
    case 'ls':
      return `${LS_ROOT.join('\n')}\n`;
    case 'cd':
    case 'chmod':
    case 'rm':
    case 'mkdir':
    case 'cp':
    case 'mv':
      return '';
    default:
      return `/system/bin/sh: ${cmd.slice(0, 64)}: not found\n`;
  }
}
