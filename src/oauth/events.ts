/** The token life events a host follows through `onEvent` (docs/operator.md#events): never a token or a secret. */
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
