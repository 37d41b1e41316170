import { OPERATIONS } from '../../operations.ts';
import type { Services } from '../../services.ts';
import { accountToProto } from '../mappers.ts';
import { unary, type CallContext } from '../unary.ts';

/** GetAccountInfo ↔ GET /account/me. */
export const getAccountInfo = (ctx: CallContext, s: Services) =>
  unary<Record<string, never>, unknown>(
    ctx,
    () => OPERATIONS.accountMe,
    async (caller) => ({ value: accountToProto(await s.accounts.accountInfo(caller)) }),
  );
