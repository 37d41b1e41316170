/**
 * Query members whose values are credentials and must never reach a log: download signatures (`sig`,
 * `signature`, `X-Amz-Signature`), `X-Amz-Credential`, `X-Amz-Security-Token`, and anything named like
 * a token, secret, key, password or session. Matched on the decoded, case-folded name, so a renamed or
 * percent-encoded member is still caught; the rule is generic on purpose (download URLs change shape).
 */
const SECRET_NAME = /sig|token|secret|key|credential|passw|pwd|auth|session/i;

/** A `name=value` query member, after `?`, `&` or `;`, inside a URL or a text that quotes one. */
const MEMBER = /([?&;])([^=&;#?\s"'<>]+)=([^&;#\s"'<>]*)/g;

export const REDACTED = '[redacted]';

function isSecretName(raw: string): boolean {
  let name = raw;
  try {
    name = decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    // Malformed percent-encoding: judge the name as sent.
  }
  return SECRET_NAME.test(name);
}

/**
 * The text with the value of every credential-like query member replaced by `[redacted]`; anything
 * else is kept as written, so a log line still says which path and which object was asked for.
 */
export function scrubSecrets(text: string): string {
  if (text.indexOf('=') === -1) return text;
  return text.replace(MEMBER, (whole, sep: string, name: string, value: string) =>
    value !== '' && isSecretName(name) ? `${sep}${name}=${REDACTED}` : whole,
  );
}

/** A request target (path and query) fit for a log line: the path as it is, secret query values redacted. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  return q === -1 ? url : url.slice(0, q) + scrubSecrets(url.slice(q));
}
