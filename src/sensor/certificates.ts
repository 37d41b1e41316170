import { createSecureContext, type SecureContext } from 'node:tls';
import { generate } from 'selfsigned';

/**
 * Self-signed certificates for the names TLS clients ask for, made on first use and kept (a bounded
 * cache, oldest out). Only names under the sensor's decoy domains get a certificate of their own;
 * any other SNI gets the first decoy domain's, so a client cycling random names cannot make the
 * sensor generate keys without end. Keys are EC P-256: one takes about 10 ms to make here, an RSA
 * one about a second.
 */
export class CertificateCache {
  private readonly contexts = new Map<string, Promise<SecureContext>>();

  constructor(
    private readonly max = 1024,
    private readonly now: () => number = Date.now,
  ) {}

  /** The context for `name` (already chosen by the caller: a decoy domain or a name under one). */
  contextFor(name: string): Promise<SecureContext> {
    const hit = this.contexts.get(name);
    if (hit) {
      // Most recently used last, so the oldest unused name is evicted first.
      this.contexts.delete(name);
      this.contexts.set(name, hit);
      return hit;
    }
    const made = this.make(name);
    made.catch(() => this.contexts.delete(name));
    this.contexts.set(name, made);
    while (this.contexts.size > this.max) this.contexts.delete(this.contexts.keys().next().value!);
    return made;
  }

  private async make(name: string): Promise<SecureContext> {
    const now = this.now();
    const pems = await generate([{ name: 'commonName', value: name }], {
      keyType: 'ec',
      curve: 'P-256',
      algorithm: 'sha256',
      // Back-dated a day, as a real certificate issued earlier is; valid for a year.
      notBeforeDate: new Date(now - 86_400_000),
      notAfterDate: new Date(now + 365 * 86_400_000),
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, critical: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: [{ type: 2, value: name }] },
      ],
    });
    return createSecureContext({ key: pems.private, cert: pems.cert });
  }
}
