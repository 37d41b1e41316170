import type { FastifyInstance } from 'fastify';
import type { Services } from '../../services.ts';
import { operatorAuth } from '../operator-auth.ts';

export const DATA_STATUS_PATH = '/internal/v1/data-status';

/** GET /internal/v1/data-status: the data the server answers from now (operator token), for `umbra data status`. */
export function registerDataStatus(app: FastifyInstance, s: Services, operatorToken: string | undefined): void {
  const authorize = operatorAuth(operatorToken, 'The data status endpoint');
  app.get(DATA_STATUS_PATH, { schema: { hide: true } as never }, async (req) => {
    authorize(req);
    return s.dataStatus();
  });
}
