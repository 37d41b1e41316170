/**
 * Rules that turn one honeypot observation into intelligence signals. Each rule is documented in
 * docs/intelligence.md; the patterns are deliberately conservative (a rule that fires on ordinary
 * browsing would make every address suspicious).
 */

/** User agents of HTTP libraries, command-line tools and scanners: PROGRAMMATIC_TRAFFIC. */
const PROGRAMMATIC_UA =
  /^(curl|wget|python-requests|python-urllib|python-httpx|aiohttp|go-http-client|java\/|okhttp|apache-httpclient|libwww-perl|node-fetch|axios|undici|ruby|php|powershell|httpie|masscan|zgrab|nuclei|l9explore|nmap|sqlmap|nikto|gobuster|dirbuster|fasthttp|hello, world)|(zgrab|masscan|nuclei|censysinspect|expanse|nmap scripting engine)/i;

/** Exploit and secret-hunting requests: MALICIOUS_TRAFFIC. Tested against the URI, the body excluded. */
const EXPLOIT_URI = [
  /\.\.\/|\.\.%2f|%2e%2e|\/\.%2e/i, // path traversal
  /\/cgi-bin\//i,
  /\/\.env(\.|$|\?)|\/\.git\/|\/\.aws\/credentials/i, // secrets
  /eval-stdin\.php/i, // CVE-2017-9841
  /[;`|]\s*(wget|curl|sh|busybox|tftp|chmod)\b|\$\(|(wget|curl)(\+|%20|\s)+(-o\S*\s*)?https?:/i, // shell injection
  /\$\{jndi:|%24%7bjndi/i, // Log4Shell
  /\/(boaform|GponForm|HNAP1|setup\.cgi|shell\?|_ignition\/execute-solution|actuator\/(env|heapdump|gateway)|ssl-vpn\/hipreport|remote\/fgt_lang)/i,
  /XDEBUG_SESSION_START|\/solr\/admin\//i,
];
/** A header carrying a Log4Shell or shell payload is exploit traffic too. */
const EXPLOIT_HEADER = /\$\{jndi:|\(\)\s*\{\s*:;\s*\}/i;

/** Login endpoints: repeated POSTs to them make CREDENTIAL_STUFFING. */
const LOGIN_URI =
  /\/(wp-login\.php|xmlrpc\.php|login|signin|sign-in|user\/login|users\/sign_in|auth|api\/auth|api\/login|owa\/auth|formLogin|session|sessions|oauth\/token|j_security_check)([/?.]|$)/i;

export interface HttpSignals {
  programmatic: boolean;
  exploit: boolean;
  /** The exploit downloads and runs a payload (Mirai-style spreading): the sender is an infected bot. */
  dropper: boolean;
  login: boolean;
}

/** A downloader followed by running what it fetched, in a URI or body (`wget+http://h/x;sh+x`). */
const HTTP_DROPPER = /\b(wget|curl|tftp)\b[^;|&`]*?(https?:\/\/|\d+\.\d+\.\d+\.\d+)[^;|&`]*[;|&`]+\s*\+?(sh|chmod|\.\/)/i;

export function headerValue(headers: Record<string, string> | undefined, name: string): string | undefined {
  if (!headers) return undefined;
  const direct = headers[name];
  if (direct !== undefined) return direct;
  const lower = name.toLowerCase();
  for (const k in headers) if (k.toLowerCase() === lower) return headers[k];
  return undefined;
}

export function httpSignals(method: string, uri: string, headers: Record<string, string> | undefined, body = ''): HttpSignals {
  const ua = headerValue(headers, 'user-agent');
  let exploit = EXPLOIT_URI.some((re) => re.test(uri));
  if (!exploit && headers) for (const k in headers) if (EXPLOIT_HEADER.test(headers[k]!)) exploit = true;
  return {
    // No User-Agent at all is a hand-written client, not a browser.
    programmatic: ua === undefined || ua === '' || PROGRAMMATIC_UA.test(ua),
    exploit,
    dropper: HTTP_DROPPER.test(uri) || (body !== '' && HTTP_DROPPER.test(body)),
    login: method.toUpperCase() === 'POST' && LOGIN_URI.test(uri),
  };
}

/**
 * An ADB shell command that fetches and runs code: a downloader (wget, curl, busybox/toybox wget or nc,
 * pm install of a dropped APK) or running a dropped binary (chmod + ./x, sh x.sh, nohup /data/...).
 */
const ADB_FETCH = /\b(wget|curl|tftp|ftpget)\b|\btoybox nc\b|\bbusybox (wget|curl|nc)\b|\bpm install\b/i;
const ADB_EXEC = /\bchmod\b|\bsh \S+\.sh\b|(^|[;&\s])\.\/\S+|\bnohup\b|\bam start\b/i;

/** Known dropper families by a marker in their commands; the tag is the BOTNET provider. */
const ADB_FAMILIES: ReadonlyArray<readonly [RegExp, string]> = [
  [/com\.ufo\.miner|trinity/i, 'ADB_MINER'],
  [/\bfbot\b/i, 'FBOT'],
  [/xmrig/i, 'XMRIG'],
  [/android\.adb/i, 'MOOBOT'],
  [/w\.sh|wget\.sh|c\.sh/i, 'MIRAI'],
];

export interface AdbSignals {
  /** The command downloads or starts a payload. */
  dropper: boolean;
  /** The dropper family when a marker names it. */
  family: string | undefined;
}

export function adbSignals(command: string): AdbSignals {
  const dropper = ADB_FETCH.test(command) || ADB_EXEC.test(command);
  const family = dropper ? ADB_FAMILIES.find(([re]) => re.test(command))?.[1] : undefined;
  return { dropper, family };
}

/**
 * Behaviours of scanners and bots, which send whatever User-Agent they like (mostly a copied desktop
 * Chrome): an address showing any of them gets no device from its User-Agents.
 */
export const SCANNER_BEHAVIORS: ReadonlySet<string> = new Set([
  'MALICIOUS_TRAFFIC',
  'COMPROMISED_DEVICE',
  'PROGRAMMATIC_TRAFFIC',
  'CREDENTIAL_STUFFING',
  'ACTIVE_CRAWLER',
]);

/** The feed whose devices come from User-Agents (the only one; JA4T and TLS devices come from fingerprints). */
export const UA_DEVICE_FEED = 'honeypot_http';

/**
 * The device a request's User-Agent names, when the request itself does not behave like a scanner's
 * (no library User-Agent, no exploit, no dropper). The address-wide rule (SCANNER_BEHAVIORS) is
 * applied when the answer is built, so a device recorded before the address started scanning goes too.
 */
export function deviceFromRequest(s: HttpSignals, ua: string | undefined): DeviceGuess | undefined {
  if (s.programmatic || s.exploit || s.dropper) return undefined;
  return deviceFromUserAgent(ua);
}

export interface DeviceGuess {
  os: string;
  version: string;
}

/** OS tokens of a browser or app User-Agent; undefined for tools and bots that name no OS. */
export function deviceFromUserAgent(ua: string | undefined): DeviceGuess | undefined {
  if (!ua?.startsWith('Mozilla/') || /bot|crawler|spider|compatible;/i.test(ua)) return undefined;
  let m: RegExpExecArray | null;
  if (/PlayStation|Xbox|Nintendo/i.test(ua)) return { os: 'GAME_CONSOLE', version: '' };
  if (/SmartTV|SMART-TV|Tizen|Web0S|WebOS|HbbTV|BRAVIA|AFT[A-Z]/i.test(ua)) return { os: 'SMART_TV', version: '' };
  // Systems outside the contract's named set; checked first because their tokens mimic others (Windows
  // Phone claims Android, BSD desktops send X11).
  if (/Windows Phone|BlackBerry|BB10|KaiOS|Symbian|FreeBSD|OpenBSD|NetBSD|SunOS|Haiku/i.test(ua)) return { os: 'OTHER', version: '' };
  if ((m = /Android (\d+(?:\.\d+)*)/.exec(ua))) return { os: 'ANDROID', version: m[1]! };
  if (/Android/.test(ua)) return { os: 'ANDROID', version: '' };
  if ((m = /(?:iPhone|CPU) OS (\d+(?:_\d+)*)/.exec(ua))) return { os: 'IOS', version: m[1]!.replace(/_/g, '.') };
  if (/iPhone|iPad|iPod/.test(ua)) return { os: 'IOS', version: '' };
  if ((m = /Windows NT (\d+\.\d+)/.exec(ua))) return { os: 'WINDOWS', version: WINDOWS_NT[m[1]!] ?? m[1]! };
  if ((m = /Mac OS X (\d+(?:[._]\d+)*)/.exec(ua))) return { os: 'MACOS', version: m[1]!.replace(/_/g, '.') };
  if (/CrOS/.test(ua)) return { os: 'CHROME_OS', version: '' };
  if (/Linux|X11/.test(ua)) return { os: 'LINUX', version: '' };
  return undefined;
}

/** NT kernel versions as the product names users know (10.0 covers Windows 10 and 11). */
const WINDOWS_NT: Record<string, string> = { '10.0': '10', '6.3': '8.1', '6.2': '8', '6.1': '7', '6.0': 'Vista', '5.1': 'XP' };

/**
 * JA4T (window_options_mss_wscale) TCP-stack families: the option order and window scale differ by
 * OS. Only unambiguous stacks are mapped; Apple's stack is shared by iOS and macOS, so it is not.
 */
export function deviceFromJa4t(ja4t: string): DeviceGuess | undefined {
  const [window, options, , wscale] = ja4t.split('_');
  if (options === '2-1-3-1-1-4' && wscale === '8') return { os: 'WINDOWS', version: '' };
  if (options === '2-4-8-1-3' && window === '65535' && wscale === '9') return { os: 'ANDROID', version: '' };
  if (options === '2-4-8-1-3' && (wscale === '7' || wscale === '10')) return { os: 'LINUX', version: '' };
  return undefined;
}

/**
 * JA4 (TLS ClientHello) of client stacks that only one OS has, by the JA4's cipher and
 * extension hashes (parts b and c: part a also holds the SNI and ALPN, which the application
 * chooses). Browsers are left out: Chrome or Firefox send the same ClientHello on every OS. Windows'
 * own TLS stack (Schannel) as WinINet and WinHTTP use it is in FoxIO's published JA4+ mapping.
 */
const JA4_STACKS: ReadonlyArray<readonly [suffix: string, device: DeviceGuess]> = [
  ['_d83cc789557e_16bbda4055b2', { os: 'WINDOWS', version: '' }], // Schannel through WinINet
  ['_76e208dd3e22_16bbda4055b2', { os: 'WINDOWS', version: '' }], // Schannel through WinHTTP
];

export function deviceFromJa4(ja4: string): DeviceGuess | undefined {
  for (const [suffix, device] of JA4_STACKS) if (ja4.endsWith(suffix)) return device;
  return undefined;
}
