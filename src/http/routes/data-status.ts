import type { Services } from '../../services.ts';

export const DATA_STATUS_PATH = '/internal/v1/data-status';

/** GET /internal/v1/data-status: the data the server answers from now, for `umbra data status`. */
export const dataStatus = (s: Services) => async (): Promise<unknown> => s.dataStatus();
