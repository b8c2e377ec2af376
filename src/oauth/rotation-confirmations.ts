/**
 * Confirming refresh token rotations once their answers were written (docs/oauth.md#tokens).
 * While the store has not been told, the rotation stays pending and the token it rotated out may
 * still repeat it, so a confirmation the store failed is tried again (core/retry-when-back.ts)
 * until the access token issued with it has expired: by then its client has refreshed with the
 * new refresh token, which settles the rotation as a confirmation does.
 *
 * The calls go to the store without the store guard's deadline: no request waits for them, and a
 * slow or failed one is no outage to report.
 */
import { retryWhenBack } from '../core/retry-when-back.js';
import type { StoreGuard } from '../core/store-guard.js';
import type { OAuthStore, TokenRef } from './store/types.js';

/**
 * Confirmations waiting to be tried again, at most: each comes from a refresh a token's holder
 * made, never from a stranger, so they wait alike, and one past the last place is not tried again.
 */
export const MAX_PENDING_CONFIRMATIONS = 10_000;

export function rotationConfirmations(
  store: Pick<OAuthStore, 'confirmRotation'>,
  guard: Pick<StoreGuard, 'degraded' | 'whenBack'>,
  accessTokenLifetimeSeconds: number,
): (successor: TokenRef) => Promise<void> {
  const confirmations = retryWhenBack(guard, { maxPending: MAX_PENDING_CONFIRMATIONS });
  return (successor) =>
    confirmations.run(() => store.confirmRotation(successor), performance.now() + accessTokenLifetimeSeconds * 1000, true);
}
