import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SigningSecret } from './download-signer.ts';
import type { SnapshotCursor } from './snapshot-catalog.ts';

/**
 * Export list cursors: opaque to clients, signed so that a cursor the server did not issue, or one
 * tampered with or used on another feed, is refused. Verified against every configured secret, so a
 * rotation does not break a client in the middle of paging.
 */
export class CursorCodec {
  constructor(private readonly secrets: readonly SigningSecret[]) {}

  encode(feed: string, c: SnapshotCursor): string {
    const body = Buffer.from(JSON.stringify({ f: feed, p: c.periodStartMs, k: c.kind })).toString('base64url');
    const s = this.secrets[0]!;
    return `${body}.${s.id}.${this.mac(s.secret, body)}`;
  }

  decode(feed: string, text: string): SnapshotCursor | undefined {
    const [body, kid, mac] = text.split('.');
    if (!body || !kid || !mac || text.length > 512) return undefined;
    const s = this.secrets.find((x) => x.id === kid);
    if (!s) return undefined;
    const want = Buffer.from(this.mac(s.secret, body));
    const got = Buffer.from(mac);
    if (want.length !== got.length || !timingSafeEqual(want, got)) return undefined;
    try {
      const v = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as { f?: unknown; p?: unknown; k?: unknown };
      if (v.f !== feed || typeof v.p !== 'number' || !Number.isSafeInteger(v.p) || (v.k !== 'daily' && v.k !== 'hourly')) return undefined;
      return { periodStartMs: v.p, kind: v.k };
    } catch {
      return undefined;
    }
  }

  private mac(secret: string, body: string): string {
    return createHmac('sha256', secret).update(`cursor:${body}`).digest('base64url');
  }
}
