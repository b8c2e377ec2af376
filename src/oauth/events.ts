/** The token life events a host can follow through `oauth.onEvent`: never a token or a secret. */
import type { Logger } from '../core/logger.js';

export type OAuthEventType = 'token.issued' | 'token.refreshed' | 'token.revoked' | 'grant.revoked' | 'refresh_token.reused';

export interface OAuthEvent {
  type: OAuthEventType;
  clientId: string;
  /** The user, when the token or grant has one. */
  sub?: string;
  /** How the token was obtained, on token.issued and token.refreshed. */
  grantType?: 'authorization_code' | 'refresh_token' | 'client_credentials';
  /** Milliseconds since the epoch. */
  at: number;
}

export type EmitEvent = (event: Omit<OAuthEvent, 'at'>) => void;

/** The host's hook, guarded: a hook that throws or rejects is logged and never breaks the request. */
export function eventEmitter(hook: ((event: OAuthEvent) => unknown) | undefined, now: () => number, logger: Logger): EmitEvent {
  if (!hook) return () => {};
  return (event) => {
    const fail = (error: unknown) => logger.error({ err: error, event: event.type }, 'oauth.onEvent failed');
    try {
      const result = hook({ ...event, at: now() });
      if (result instanceof Promise) result.catch(fail);
    } catch (error) {
      fail(error);
    }
  };
}
