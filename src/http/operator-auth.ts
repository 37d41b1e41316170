import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

/**
 * The check of the operator endpoints under /internal/v1 (ingestion, data status): the operator
 * token as a Bearer token, never a customer key, compared in constant time.
 */
export function operatorAuth(operatorToken: string | undefined, what: string): (req: FastifyRequest) => void {
  const expected = operatorToken === undefined ? undefined : digest(operatorToken);
  return (req) => {
    const header = req.headers.authorization;
    const given = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : undefined;
    if (!expected) throw new AppError('UNAVAILABLE', `${what} is not configured: set UMBRA_OPERATOR_TOKEN.`);
    if (!given || !timingSafeEqual(digest(given), expected))
      throw new AppError('UNAUTHENTICATED', `${what} needs "Authorization: Bearer <operator token>".`);
  };
}
