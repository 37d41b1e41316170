/**
 * HTTP clients seen at honeypots, with the header order each really sends (header order is itself a
 * fingerprint). `headers` gets the Host value; a null Host means the client sends none (masscan).
 */
export type ClientName =
  | 'zgrab'
  | 'masscan'
  | 'nuclei'
  | 'python_requests'
  | 'go_http'
  | 'curl'
  | 'censys'
  | 'expanse'
  | 'l9explore'
  | 'chrome'
  | 'firefox'
  | 'googlebot'
  | 'mirai'
  | 'bare';

export interface HttpClient {
  version: 'HTTP/1.1' | 'HTTP/1.0';
  headers(host: string): Array<[string, string]>;
}

const CHROME_UA = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const FIREFOX_UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0';
const EXPANSE_UA =
  'Expanse, a Palo Alto Networks company, searches across the global IPv4 space multiple times per day to identify customers&#39; ' +
  'presences on the Internet. If you would like to be excluded from our scans, please send IP addresses/domains to: scaninfo@paloaltonetworks.com';
const HTML_ACCEPT =
  'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7';

const v11 = (headers: HttpClient['headers']): HttpClient => ({ version: 'HTTP/1.1', headers });

export const HTTP_CLIENTS: Record<ClientName, HttpClient> = {
  zgrab: v11((h) => [
    ['Host', h],
    ['User-Agent', 'Mozilla/5.0 zgrab/0.x'],
    ['Accept', '*/*'],
    ['Accept-Encoding', 'gzip'],
  ]),
  masscan: {
    version: 'HTTP/1.0',
    headers: () => [
      ['User-Agent', 'masscan/1.3 (https://github.com/robertdavidgraham/masscan)'],
      ['Accept', '*/*'],
    ],
  },
  nuclei: v11((h) => [
    ['Host', h],
    ['User-Agent', 'Nuclei - Open-source project (github.com/projectdiscovery/nuclei)'],
    ['Connection', 'close'],
    ['Accept', '*/*'],
    ['Accept-Language', 'en'],
    ['Accept-Encoding', 'gzip'],
  ]),
  python_requests: v11((h) => [
    ['Host', h],
    ['User-Agent', 'python-requests/2.32.3'],
    ['Accept-Encoding', 'gzip, deflate'],
    ['Accept', '*/*'],
    ['Connection', 'keep-alive'],
  ]),
  go_http: v11((h) => [
    ['Host', h],
    ['User-Agent', 'Go-http-client/1.1'],
    ['Accept-Encoding', 'gzip'],
  ]),
  curl: v11((h) => [
    ['Host', h],
    ['User-Agent', 'curl/8.5.0'],
    ['Accept', '*/*'],
  ]),
  censys: v11((h) => [
    ['Host', h],
    ['User-Agent', 'Mozilla/5.0 (compatible; CensysInspect/1.1; +https://about.censys.io/)'],
    ['Accept', '*/*'],
    ['Accept-Encoding', 'gzip'],
  ]),
  expanse: v11((h) => [
    ['Host', h],
    ['User-Agent', EXPANSE_UA],
    ['Accept-Encoding', 'gzip'],
  ]),
  l9explore: v11((h) => [
    ['Host', h],
    ['User-Agent', 'l9explore/1.2.2'],
    ['Accept-Encoding', 'gzip'],
  ]),
  chrome: v11((h) => [
    ['Host', h],
    ['Connection', 'keep-alive'],
    ['Upgrade-Insecure-Requests', '1'],
    ['User-Agent', CHROME_UA],
    ['Accept', HTML_ACCEPT],
    ['Accept-Encoding', 'gzip, deflate'],
    ['Accept-Language', 'en-US,en;q=0.9'],
  ]),
  firefox: v11((h) => [
    ['Host', h],
    ['User-Agent', FIREFOX_UA],
    ['Accept', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'],
    ['Accept-Language', 'en-US,en;q=0.5'],
    ['Accept-Encoding', 'gzip, deflate'],
    ['Connection', 'keep-alive'],
    ['Upgrade-Insecure-Requests', '1'],
  ]),
  googlebot: v11((h) => [
    ['Host', h],
    ['Connection', 'keep-alive'],
    ['Accept', 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'],
    ['From', 'googlebot(at)googlebot.com'],
    ['User-Agent', 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)'],
    ['Accept-Encoding', 'gzip, deflate, br'],
  ]),
  // Mirai-family droppers hard-code their headers, Host included, and announce themselves as "Hello, World".
  mirai: v11(() => [
    ['Host', '127.0.0.1:80'],
    ['Connection', 'keep-alive'],
    ['Accept-Encoding', 'gzip, deflate'],
    ['Accept', '*/*'],
    ['User-Agent', 'Hello, World'],
  ]),
  bare: v11((h) => [['Host', h]]),
};
