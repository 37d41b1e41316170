import { domainToASCII } from 'node:url';
import { parseIp } from './ip-address.ts';

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * Normalises a domain from a path segment to lower-case Punycode. Returns an error message for
 * anything that is not a plain host name: a decoded '/', '\', '..', '%', whitespace, IP literals.
 * The result is only ever used as a lookup key, never as a file path.
 */
export function normalizeDomain(input: string): { ok: true; domain: string } | { ok: false; message: string } {
  if (input.length === 0 || input.length > 1024) return { ok: false, message: 'must be a domain name of at most 253 characters' };
  if (/[/\\%\s?#@:]/.test(input) || input.includes('..')) {
    return { ok: false, message: 'must be a plain domain name (no "/", "\\", "..", "%", ":", "@" or spaces)' };
  }
  const trimmed = input.endsWith('.') ? input.slice(0, -1) : input;
  if (parseIp(trimmed)) return { ok: false, message: 'is an IP address; use /lookup/ip/{ip_address}' };
  const ascii = domainToASCII(trimmed.toLowerCase());
  if (ascii === '' || ascii.length > 253)
    return { ok: false, message: 'must be a valid domain name (Unicode or Punycode) of at most 253 characters' };
  const labels = ascii.split('.');
  if (labels.length < 2) return { ok: false, message: 'must have at least two labels, like example.com' };
  if (!labels.every((l) => LABEL.test(l)))
    return { ok: false, message: 'has an invalid label: letters, digits and inner hyphens only, 1 to 63 characters each' };
  if (/^[0-9]+$/.test(labels[labels.length - 1]!)) return { ok: false, message: 'must end in a top-level domain, not a number' };
  return { ok: true, domain: ascii };
}
