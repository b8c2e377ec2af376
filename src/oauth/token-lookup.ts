/** Which live token a presented value is, for revocation (RFC 7009 2.1) and introspection (RFC 7662 2.1). */
import type { OAuthContext } from './context.js';
import type { AccessTokenRecord, RefreshTokenRecord, TokenRef } from './store/types.js';
import { parseToken } from './token-format.js';

export type FoundToken = { kind: 'access_token'; ref: TokenRef; record: AccessTokenRecord } | { kind: 'refresh_token'; ref: TokenRef; record: RefreshTokenRecord };

/**
 * The live access or refresh token, looked up first as `hint` says and then as the other kind
 * (RFC 7009 2.1: a wrong hint only costs a second lookup). A rotated-out refresh token is no
 * longer live; with `rotated`, it is found too (revocation ends its grant).
 */
export async function findToken(
  context: Pick<OAuthContext, 'store'>,
  value: string | undefined,
  hint: string | undefined,
  options: { rotated?: boolean } = {},
): Promise<FoundToken | undefined> {
  const ref = parseToken(value);
  if (!ref) return undefined;
  const access = async (): Promise<FoundToken | undefined> => {
    const record = await context.store.findAccessToken(ref);
    return record && { kind: 'access_token', ref, record };
  };
  const refresh = async (): Promise<FoundToken | undefined> => {
    const record = await context.store.findRefreshToken(ref);
    return record && (options.rotated || !record.consumed) ? { kind: 'refresh_token', ref, record } : undefined;
  };
  const [first, second] = hint === 'refresh_token' ? [refresh, access] : [access, refresh];
  return (await first()) ?? second();
}
