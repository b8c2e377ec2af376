/**
 * The glue to @node-oauth/oauth2-server. The engine runs the RFC 6749 mechanics (code issuance,
 * grant dispatch, PKCE verification, refresh scope narrowing, token response); everything OpenID
 * Connect and every engine pitfall is handled here, through a model built per request so it can
 * see the request's own facts (the authenticated client, the redirect_uri, the user's auth_time).
 */
import OAuth2Server from '@node-oauth/oauth2-server';
import type { PlatformResponse } from '../core/http.js';
import { claimsForScope } from './claims.js';
import type { OAuthContext } from './context.js';
import { fromEngineError } from './errors.js';
import { signIdToken } from './id-token.js';
import type { OAuthUser } from './options.js';
import { redirectError, redirectTo } from './redirect.js';
import type { AuthorizedUser, OAuthClientRecord, TokenRef } from './store/types.js';
import { newGrantId, newToken, parseToken } from './token-format.js';

const { InvalidGrantError, InvalidRequestError, InvalidScopeError } = OAuth2Server;

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
  /** The scope the user granted: a rotated refresh token keeps it even when the access token is narrowed (RFC 6749 6). */
  grantedScope: string[];
  /** The refresh token presented, for a refresh; its rotation and the new tokens are stored in one step. */
  presented?: TokenRef;
}

/** The model for one token request, by an already authenticated client. */
export function tokenModel(context: OAuthContext, client: OAuthClientRecord, issuer: string, body: Record<string, string>) {
  const store = context.store;
  let grant: GrantInProgress | undefined;
  /** The refresh token a rotation handed out, confirmed once its answer is written (confirmRotation). */
  let successor: TokenRef | undefined;

  const revoke = async (grantId: string, reason: string) => {
    await store.revokeGrant(grantId);
    context.logger.warn({ reason, clientId: client.id }, 'revoked a grant');
  };
  // RFC 9700 4.14.2: reuse of a rotated-out refresh token means it leaked; end the grant.
  const reused = async (grantId: string, clientId: string, sub: string) => {
    await revoke(grantId, 'rotated refresh token reused');
    context.emit({ type: 'refresh_token.reused', clientId, sub });
  };

  return {
    /** After a refresh: the refresh token it handed out, for confirmRotation once the answer is written. */
    rotatedTo: () => successor,

    getClient: async (clientId: string) => (clientId === client.id ? engineClient(client) : null),

    getAuthorizationCode: async (value: string) => {
      const ref = parseToken(value);
      const record = ref && (await store.findCode(ref));
      if (!ref || !record) return null;
      // RFC 6749 4.1.2 / 10.5: a second use of a code revokes every token issued from it.
      if (record.consumed) {
        await revoke(ref.grantId, 'authorization code replayed');
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
      if (!first) await revoke(ref.grantId, 'authorization code used concurrently');
      return first;
    },

    getRefreshToken: async (value: string) => {
      const ref = parseToken(value);
      const record = ref && (await store.findRefreshToken(ref));
      if (!ref || !record) return null;
      if (record.clientId !== client.id) {
        // RFC 9700 4.14.2: a rotated-out token in another client's hands leaked; end the grant.
        if (record.consumed) await reused(ref.grantId, record.clientId, record.user.sub);
        return null;
      }
      // An earlier generation's token goes on to the store's rotation step, which alone knows
      // whether it repeats a rotation still pending or is a reuse (docs/oauth.md#tokens).
      // Refuse an escalation before the engine goes on, so the refresh token survives the refusal.
      const extra = (body.scope ?? '').split(' ').filter((s) => s && !record.scope.includes(s));
      if (extra.length > 0) throw new InvalidScopeError(`scope was not granted: ${extra.join(' ')}`);
      grant = { grantId: ref.grantId, authTime: record.authTime, grantedScope: record.scope, presented: ref };
      return {
        refreshToken: value,
        refreshTokenExpiresAt: engineDate(context, record.expiresAt),
        scope: record.scope,
        client: engineClient(client),
        user: record.user,
      };
    },

    // The rotation happens in saveToken, in the same store step as the new tokens: a failure in
    // between cannot leave the client with a rotated token and nothing to replace it.
    revokeToken: async () => true,

    generateAccessToken: async () => newToken(grant!.grantId).value,
    generateRefreshToken: async () => newToken(grant!.grantId).value,

    saveToken: async (token: OAuth2Server.Token, _client: OAuth2Server.Client, user: AuthorizedUser) => {
      const current = grant!;
      const scope = (token.scope ?? []) as string[];
      const now = context.now();
      const accessExpiresAt = now + context.lifetimes.accessToken * 1000;
      const refreshExpiresAt = now + context.lifetimes.refreshToken * 1000;
      // The engine issues a refresh token on every exchange; only offline_access earns one (OIDC Core 11),
      // and a refresh always replaces the token presented.
      const granted = current.grantedScope;
      const refreshValue =
        current.presented || (granted.includes('offline_access') && client.grants.includes('refresh_token')) ? token.refreshToken : undefined;
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
        const ring = context.keyRing();
        // A stored client may name an algorithm no key signs any more: RS256 then (docs/oauth.md#signing-keys).
        const key = (client.idTokenSigningAlg && ring.forAlg(client.idTokenSigningAlg)) || ring.current;
        saved.id_token = await signIdToken(key, {
          issuer,
          clientId: client.id,
          sub: user.sub,
          claims: claimsForScope(user.sub, user.claims, scope),
          authTime: current.authTime,
          ...(current.nonce === undefined ? {} : { nonce: current.nonce }),
          accessToken: token.accessToken,
          now,
          lifetimeSeconds: context.lifetimes.idToken,
        });
      }
      const access = { ref: parseToken(token.accessToken)!, scope, expiresAt: accessExpiresAt, issuedAt: Math.floor(now / 1000) };
      const refresh = refreshValue ? { ref: parseToken(refreshValue)!, expiresAt: refreshExpiresAt } : undefined;
      if (current.presented) {
        const outcome = await store.rotateRefreshToken(current.presented, { access, refresh: refresh! }, context.refreshRetryGraceMs);
        if (outcome === 'reused') await reused(current.grantId, client.id, user.sub);
        if (outcome !== 'rotated') throw new InvalidGrantError('the refresh token is no longer valid');
        successor = refresh!.ref;
      } else if (!(await store.issueTokens(refresh ? { access, refresh } : { access }))) {
        throw new InvalidGrantError('the grant was revoked');
      }
      context.emit(
        current.presented
          ? { type: 'token.refreshed', clientId: client.id, sub: user.sub, grantType: 'refresh_token' }
          : { type: 'token.issued', clientId: client.id, sub: user.sub, grantType: 'authorization_code' },
      );
      return saved;
    },
  };
}
