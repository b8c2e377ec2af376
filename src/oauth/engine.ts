/**
 * The glue to @node-oauth/oauth2-server. The engine runs the authorization code mechanics (code
 * issuance, the code exchange, PKCE verification, the token response); everything OpenID Connect
 * and every engine pitfall is handled here, through a model built per request so it can see the
 * request's own facts (the authenticated client, the redirect_uri, the user's auth_time). The
 * refresh_token grant (refresh-grant.ts) and the client_credentials grant (client-credentials.ts)
 * are the platform's own.
 */
import OAuth2Server from '@node-oauth/oauth2-server';
import type { PlatformResponse } from '../core/http.js';
import type { OAuthContext } from './context.js';
import { fromEngineError } from './errors.js';
import { idTokenFor, revokeGrant } from './grant-tokens.js';
import type { OAuthUser } from './options.js';
import { redirectError, redirectTo } from './redirect.js';
import type { AuthorizedUser, OAuthClientRecord } from './store/types.js';
import { newGrantId, newRefreshToken, newToken, parseToken } from './token-format.js';

const { InvalidGrantError, InvalidRequestError } = OAuth2Server;

/** A validated authorization request: everything needed to issue a code once the user agrees. */
export interface AuthorizationRequest {
  clientId: string;
  redirectUri: string;
  scope: string[];
  state: string;
  nonce?: string;
  codeChallenge?: string;
}

function engineClient(client: OAuthClientRecord): OAuth2Server.Client {
  // redirectUris must be an array: the engine matches with includes(), which on a string would be a substring test.
  return { id: client.id, grants: [...client.grants], redirectUris: [...client.redirectUris] };
}

/** The engine compares expiry with the wall clock; express ours relative to it so an injected clock stays authoritative. */
function engineDate(context: OAuthContext, expiresAt: number): Date {
  return new Date(Date.now() + (expiresAt - context.now()));
}

function authorizedUser(user: OAuthUser): AuthorizedUser {
  const { sub, auth_time: _authTime, ...claims } = user;
  return { sub, claims };
}

/** Issues a code through the engine's authorize, then adds RFC 9207's `iss` to the redirect. */
export async function issueAuthorizationCode(
  context: OAuthContext,
  issuer: string,
  client: OAuthClientRecord,
  user: OAuthUser,
  authorization: AuthorizationRequest,
  authTime: number,
): Promise<PlatformResponse> {
  const grantId = newGrantId();
  const query: Record<string, string> = {
    response_type: 'code',
    client_id: client.id,
    redirect_uri: authorization.redirectUri,
    scope: authorization.scope.join(' '),
    state: authorization.state,
  };
  if (authorization.codeChallenge) {
    query.code_challenge = authorization.codeChallenge;
    query.code_challenge_method = 'S256';
  }
  const model = {
    getClient: async () => engineClient(client),
    generateAuthorizationCode: async () => newToken(grantId).value,
    // nonce and auth_time never pass through the engine: they are carried to the code record here.
    saveAuthorizationCode: async (code: OAuth2Server.AuthorizationCode, engineClientValue: OAuth2Server.Client, engineUser: OAuth2Server.User) => {
      const ref = parseToken(code.authorizationCode)!;
      await context.store.saveCode({
        ref,
        clientId: client.id,
        scope: authorization.scope,
        user: authorizedUser(user),
        authTime,
        expiresAt: context.now() + context.lifetimes.code * 1000,
        redirectUri: authorization.redirectUri,
        ...(authorization.nonce === undefined ? {} : { nonce: authorization.nonce }),
        ...(authorization.codeChallenge === undefined ? {} : { codeChallenge: authorization.codeChallenge, codeChallengeMethod: 'S256' as const }),
      });
      return { ...code, client: engineClientValue, user: engineUser };
    },
  };
  const request = new OAuth2Server.Request({ method: 'GET', headers: {}, query, body: {} });
  const response = new OAuth2Server.Response();
  try {
    await context.engine.authorize(request, response, withModel(model, {
      authenticateHandler: { handle: () => user },
      authorizationCodeLifetime: context.lifetimes.code,
    }));
  } catch (error) {
    return redirectError(authorization.redirectUri, issuer, authorization.state, fromEngineError(error));
  }
  return redirectTo(String(response.get('location')), { iss: issuer });
}

/** The engine merges per-call options over its own, `model` included (lib/server.js); its typings leave that out. */
export function withModel<T extends object>(model: object, options: T): T {
  return { ...options, model } as T;
}

interface GrantInProgress {
  grantId: string;
  authTime: number;
  nonce?: string;
  /** The scope the user granted. */
  grantedScope: string[];
}

/**
 * The model for one authorization_code exchange, by an already authenticated client. The
 * refresh_token grant does not go through the engine (refresh-grant.ts).
 */
export function tokenModel(context: OAuthContext, client: OAuthClientRecord, issuer: string, body: Record<string, string>) {
  const store = context.store;
  let grant: GrantInProgress | undefined;

  return {
    getClient: async (clientId: string) => (clientId === client.id ? engineClient(client) : null),

    getAuthorizationCode: async (value: string) => {
      const ref = parseToken(value);
      const record = ref && (await store.findCode(ref));
      if (!ref || !record) return null;
      // RFC 6749 4.1.2 / 10.5: a second use of a code revokes every token issued from it.
      if (record.consumed) {
        await revokeGrant(context, ref.grantId, 'authorization code replayed', client.id);
        return null;
      }
      if (record.clientId !== client.id) return null;
      if (body.redirect_uri === undefined) throw new InvalidRequestError('redirect_uri is required: send the one of the authorization request');
      if (body.redirect_uri !== record.redirectUri) throw new InvalidGrantError('redirect_uri does not match the authorization request');
      grant = {
        grantId: ref.grantId,
        authTime: record.authTime,
        grantedScope: record.scope,
        ...(record.nonce === undefined ? {} : { nonce: record.nonce }),
      };
      return {
        authorizationCode: value,
        expiresAt: engineDate(context, record.expiresAt),
        redirectUri: record.redirectUri,
        scope: record.scope,
        client: engineClient(client),
        user: record.user,
        ...(record.codeChallenge ? { codeChallenge: record.codeChallenge, codeChallengeMethod: record.codeChallengeMethod } : {}),
      };
    },

    // Consumed before PKCE is verified, so a wrong code_verifier burns the code (no online guessing).
    revokeAuthorizationCode: async (code: OAuth2Server.AuthorizationCode) => {
      const ref = parseToken(code.authorizationCode)!;
      const first = await store.consumeCode(ref);
      if (!first) await revokeGrant(context, ref.grantId, 'authorization code used concurrently', client.id);
      return first;
    },

    generateAccessToken: async () => newToken(grant!.grantId).value,
    generateRefreshToken: async () => newRefreshToken(grant!.grantId, client.id, context.secret()).value,

    saveToken: async (token: OAuth2Server.Token, _client: OAuth2Server.Client, user: AuthorizedUser) => {
      const current = grant!;
      const scope = (token.scope ?? []) as string[];
      const now = context.now();
      // The engine issues a refresh token on every exchange; only offline_access earns one (OIDC Core 11).
      const refreshValue = current.grantedScope.includes('offline_access') && client.grants.includes('refresh_token') ? token.refreshToken : undefined;
      const saved: Record<string, unknown> = {
        accessToken: token.accessToken,
        accessTokenExpiresAt: new Date(Date.now() + context.lifetimes.accessToken * 1000),
        scope,
        client: engineClient(client),
        user,
      };
      if (refreshValue) {
        saved.refreshToken = refreshValue;
        saved.refreshTokenExpiresAt = new Date(Date.now() + context.lifetimes.refreshToken * 1000);
      }
      // Signed before the tokens are stored, so nothing can fail once they are.
      if (scope.includes('openid')) {
        saved.id_token = await idTokenFor(context, {
          issuer,
          client,
          user,
          scope,
          authTime: current.authTime,
          ...(current.nonce === undefined ? {} : { nonce: current.nonce }),
          accessToken: token.accessToken,
          now,
        });
      }
      const access = { ref: parseToken(token.accessToken)!, scope, expiresAt: now + context.lifetimes.accessToken * 1000, issuedAt: Math.floor(now / 1000) };
      const refresh = refreshValue ? { ref: parseToken(refreshValue)!, expiresAt: now + context.lifetimes.refreshToken * 1000 } : undefined;
      if (!(await store.issueTokens(refresh ? { access, refresh } : { access }))) throw new InvalidGrantError('the grant was revoked');
      context.emit({ type: 'token.issued', clientId: client.id, sub: user.sub, grantType: 'authorization_code' });
      return saved;
    },
  };
}
