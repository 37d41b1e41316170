import type { SpaceKind } from './address-space.ts';

/**
 * JA4T strings as sensors report them: window_options_mss_wscale. umbra never computes JA4T (restrictive
 * licence); these are plausible values per OS. The MSS drops below 1460 behind PPPoE (1452),
 * VPN and mobile tunnels (1436, 1400, 1380...), which is what makes proxies stand out.
 */
const LINUX_SERVER = ['64240_2-4-8-1-3_1460_7', '29200_2-4-8-1-3_1460_7', '64240_2-4-8-1-3_1460_10', '43080_2-4-8-1-3_1436_9'];
const WINDOWS = ['64240_2-1-3-1-1-4_1460_8', '65535_2-1-3-1-1-4_1460_8', '64240_2-1-3-1-1-4_1452_8', '8192_2-1-3-1-1-4_1460_8'];
const APPLE = [
  '65535_2-1-3-1-1-8-4-0-0_1460_6',
  '65535_2-1-3-1-1-8-4-0-0_1452_6',
  '65535_2-1-3-1-1-8-4-0-0_1380_6',
  '65535_2-1-3-1-1-8-4-0-0_1440_6',
];
const ANDROID = [
  '65535_2-4-8-1-3_1460_9',
  '65535_2-4-8-1-3_1400_9',
  '65535_2-4-8-1-3_1360_9',
  '43080_2-4-8-1-3_1436_9',
  '42600_2-4-8-1-3_1420_9',
];
const EMBEDDED = ['5840_2-4-8-1-3_1460_0', '14600_2-4-8-1-3_1460_2', '29200_2-4-8-1-3_1460_4'];

/** Which OS families answer from each kind of network, with weights. */
export const JA4T_BY_SPACE: Partial<Record<SpaceKind, ReadonlyArray<readonly [readonly string[], number]>>> = {
  residential: [
    [WINDOWS, 5],
    [APPLE, 3],
    [ANDROID, 3],
    [LINUX_SERVER, 1],
    [EMBEDDED, 2],
  ],
  mobile: [
    [ANDROID, 6],
    [APPLE, 4],
  ],
  hosting: [
    [LINUX_SERVER, 8],
    [WINDOWS, 2],
  ],
};

export const JA4T_FALLBACK: readonly string[] = LINUX_SERVER;
