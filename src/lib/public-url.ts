/**
 * Absolute URLs for what umbra serves itself (the download route of the URLs it signs), whether or not
 * a proxy sits in front. UMBRA_PUBLIC_URL names the base when set; otherwise each transport derives one
 * from what the client asked for, by the rules below (stated for operators in docs/deploy.md#public-url).
 */

/** `host[:port]` as a Host header or an HTTP/2 :authority carries it. */
export interface Authority {
  /** A DNS name, an IPv4 address, or an IPv6 address in brackets. */
  host: string;
  port: number | undefined;
}

// A plain name, IPv4 address or bracketed IPv6 address, and an optional port: nothing else (user info,
// paths, spaces, stray characters of a forged header) is ever put into a URL umbra hands out.
const AUTHORITY =
  /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.?)(?::(\d{1,5}))?$/;

/** A Host header or :authority as host and port; undefined when absent or not a plain `host[:port]`. */
export function parseAuthority(text: string | undefined): Authority | undefined {
  if (!text || text.length > 262) return undefined;
  const m = AUTHORITY.exec(text);
  if (!m) return undefined;
  const port = m[2] === undefined ? undefined : Number(m[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  return { host: m[1]!.toLowerCase(), port };
}

/** An address as a URL's host: IPv6 in brackets. */
const urlHost = (address: string): string => (address.includes(':') && !address.startsWith('[') ? `[${address}]` : address);

const origin = (scheme: string, host: string, port: number | undefined): string =>
  `${scheme}://${urlHost(host)}${port === undefined ? '' : `:${port}`}`;

/** Any absolute URL (`https://bucket.s3…`): a scheme, then a colon. */
const ABSOLUTE = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/**
 * `location` made absolute on `base`. A path from umbra's root (`/downloads?…`) is appended to the
 * base, path prefix included (`https://example.com/umbra` + `/downloads?…`): `new URL(path, base)`
 * would drop the prefix. An absolute URL (an object store's presigned one) is returned as it is.
 */
export function absoluteUrl(base: string, location: string): string {
  if (ABSOLUTE.test(location)) return location;
  if (!location.startsWith('/') || location.startsWith('//')) throw new Error(`not a path from the root: ${JSON.stringify(location)}`);
  return `${base.replace(/\/+$/, '')}${location}`;
}

/**
 * The base of umbra's own URLs in an HTTP answer: UMBRA_PUBLIC_URL, else the connection's scheme and
 * the Host the client asked for. X-Forwarded-Host and -Proto are not read: umbra cannot tell a proxy's
 * header from one a client made up, and no proxy is configured as trusted (behind one, set
 * UMBRA_PUBLIC_URL). A Host that is absent (HTTP/1.0) or not a plain `host[:port]` gives way to the
 * address and port the connection reached.
 */
export function httpBase(o: {
  publicUrl: string | undefined;
  scheme: 'http' | 'https';
  host: string | undefined;
  local: { address: string | undefined; port: number | undefined };
}): string {
  if (o.publicUrl) return o.publicUrl;
  const named = parseAuthority(o.host);
  if (named) return origin(o.scheme, named.host, named.port);
  return origin(o.scheme, o.local.address ?? '127.0.0.1', o.local.port);
}

/** The address a wildcard listen is reached at on this host (as `umbra serve` prints it). */
const reachable = (listenHost: string): string => (listenHost === '0.0.0.0' ? '127.0.0.1' : listenHost === '::' ? '::1' : listenHost);

/**
 * The base of umbra's own URLs in a gRPC answer: UMBRA_PUBLIC_URL, else `http://`, the host of the
 * call's :authority, and umbra's HTTP port. The download route is served by the HTTP port, in
 * plaintext, not by the gRPC port the client called, so only the host is taken from the call: right
 * when clients reach both ports of umbra directly under one name; behind a proxy, set UMBRA_PUBLIC_URL.
 * An :authority that is not a plain `host[:port]` gives way to the listen address.
 */
export function grpcBase(o: {
  publicUrl: string | undefined;
  authority: string | undefined;
  httpPort: number;
  listenHost: string;
}): string {
  if (o.publicUrl) return o.publicUrl;
  return origin('http', parseAuthority(o.authority)?.host ?? reachable(o.listenHost), o.httpPort);
}
