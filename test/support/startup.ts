/** Starting a platform on a store as an operator does: `ready()` before listening (docs/deployment.md#start). */
import type { OAuthStore } from '../../src/oauth/store/types.js';
import { cheapClients, oauthHost, sharedSigningKey } from './oauth.js';

/** A platform on `store`, as an operator starts it: `ready()` before listening. */
export async function readyOutcome(store: OAuthStore): Promise<{ error: unknown; ms: number }> {
  const host = oauthHost('express', { store, clients: await cheapClients(), signingKeys: [await sharedSigningKey()], publicUrl: 'http://127.0.0.1:9' });
  const started = performance.now();
  const error = await host.ready().then(
    () => undefined,
    (e: unknown) => e,
  );
  return { error, ms: performance.now() - started };
}

/** A store in another zone while it connects: each new connection waits this long. */
export const CONNECTING = { connectMs: 200 };
