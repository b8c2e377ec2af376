import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { readBody } from '../core/body.js';
import type { PlatformRequest, PlatformResponse } from '../core/http.js';
import type { RouteDoc, RouteResponseDoc } from '../core/route-doc.js';
import { SCOPE_DESCRIPTIONS, SUPPORTED_SCOPES } from './claims.js';
import { issuerFor, nowSeconds, type OAuthContext } from './context.js';
import { issueAuthorizationCode, type AuthorizationRequest } from './engine.js';
import { OAuthProtocolError } from './errors.js';
import type { OAuthUser } from './options.js';
import { consentPage, errorPage } from './pages.js';
import { afterPost, redirectError } from './redirect.js';
import { loginAskedAt, loginRedirect } from './login-marker.js';
import { seal, unseal } from './signed-payload.js';
import type { OAuthClientRecord } from './store/types.js';

const PROMPTS = new Set(['none', 'login', 'consent', 'select_account']);
const TRANSACTION_SECONDS = 600;
const PKCE_CHALLENGE = /^[A-Za-z0-9_-]{43}$/;

type Params = Record<string, string>;

/** The request's parameters (query for GET, form for POST); `repeated` names one sent twice. */
async function readParams(request: PlatformRequest, context: OAuthContext): Promise<{ params: Params; repeated?: string }> {
  if (request.method === 'POST') {
    // The form reader already refuses repeated parameters.
    return { params: ((await readBody(request, { limit: context.bodyLimit, accept: ['form'] })) ?? {}) as Params };
  }
  const params: Params = {};
  for (const [key, value] of request.query) {
    if (Object.hasOwn(params, key)) return { params, repeated: key };
    params[key] = value;
  }
  return { params };
}

// The parameters are checked one by one below, in the order RFC 6749 4.1.2.1 requires (the
// client and its redirect URI before anything may redirect), so this schema only describes them.
const authorizeParams = z.object({
  response_type: z.literal('code'),
  client_id: z.string(),
  redirect_uri: z.url().meta({ description: 'One of the redirect URIs registered for the client, exactly' }),
  scope: z.string().meta({ description: `Space separated, from: ${SUPPORTED_SCOPES.join(' ')}`, example: 'openid profile' }),
  state: z.string().regex(/^[\x20-\x7E]+$/),
  nonce: z.string().optional(),
  code_challenge: z.string().regex(PKCE_CHALLENGE).optional().meta({ description: 'PKCE (S256); required of public clients' }),
  code_challenge_method: z.literal('S256').optional(),
  response_mode: z.literal('query').optional().meta({ description: 'The only mode: the answer is in the query' }),
  prompt: z.string().optional().meta({ description: 'none, or any of login consent select_account' }),
  max_age: z.string().regex(/^\d{1,10}$/).optional().meta({ description: 'Seconds since the last sign-in' }),
});

const html = (description: string): RouteResponseDoc => ({ description, contentType: 'text/html', schema: z.string() });

/** What the browser gets from authorize and consent: a redirect, a page, or the error page. */
function browserResponses(redirect: 302 | 303): Record<number, RouteResponseDoc> {
  return {
    [redirect]: { description: "To the redirect_uri with `code`, `state` and `iss` (or `error`), or to the host's login page", headers: ['Location'] },
    400: html('The error page: unknown client, redirect_uri missing or not registered, a repeated parameter'),
    500: html("The error page: the host's sign-in check failed"),
    503: html('The error page: the OAuth store is unavailable'),
  };
}

/** GET /authorize takes the query, POST /authorize the same parameters as a form. */
export function authorizeDoc(method: 'GET' | 'POST'): RouteDoc {
  const input = method === 'GET' ? { query: authorizeParams } : { body: { contentType: 'application/x-www-form-urlencoded' as const, schema: authorizeParams } };
  return {
    operationId: method === 'GET' ? 'oauth_authorize' : 'oauth_authorize_form',
    summary: 'Start a sign-in (OpenID Connect authorization code flow with PKCE)',
    tag: 'oauth',
    ...input,
    responses: { ...browserResponses(method === 'GET' ? 302 : 303), 200: html('The consent page') },
  };
}

export const consentDoc: RouteDoc = {
  operationId: 'oauth_consent',
  summary: "The consent page's Approve / Deny form",
  tag: 'oauth',
  body: {
    contentType: 'application/x-www-form-urlencoded',
    schema: z.object({ transaction: z.string().meta({ description: 'The sealed transaction of the consent page' }), decision: z.enum(['approve', 'deny']) }),
  },
  responses: { ...browserResponses(303), 403: html('The error page: the signed-in user is not the one the page was shown to') },
};

function parseScope(value: string | undefined, client: OAuthClientRecord): string[] {
  const requested = [...new Set((value ?? '').split(' ').filter(Boolean))];
  if (requested.length === 0) throw new OAuthProtocolError('invalid_scope', 'scope is required (for example: openid profile email)');
  const unknown = requested.filter((s) => !(SUPPORTED_SCOPES as readonly string[]).includes(s) || !client.scopes.includes(s));
  if (unknown.length > 0) throw new OAuthProtocolError('invalid_scope', `scope not allowed for this client: ${unknown.join(' ')}`);
  return requested;
}

/** RFC 7636: S256 only. A challenge without a method means `plain` (4.3), which is refused too. */
function parsePkce(params: Params, client: OAuthClientRecord): string | undefined {
  const challenge = params.code_challenge;
  const method = params.code_challenge_method;
  if (challenge === undefined) {
    if (method !== undefined) throw new OAuthProtocolError('invalid_request', 'code_challenge_method was sent without code_challenge');
    if (!client.secretHash) throw new OAuthProtocolError('invalid_request', 'public clients must use PKCE (code_challenge with S256)');
    return undefined;
  }
  if (method !== 'S256') {
    throw new OAuthProtocolError('invalid_request', `code_challenge_method must be S256 (${method === undefined ? 'missing means plain' : `got ${method}`}), RFC 7636 4.3`);
  }
  if (!PKCE_CHALLENGE.test(challenge)) throw new OAuthProtocolError('invalid_request', 'code_challenge must be 43 base64url characters (RFC 7636 4.2)');
  return challenge;
}

function parsePrompt(value: string | undefined): Set<string> {
  const prompt = new Set((value ?? '').split(' ').filter(Boolean));
  for (const p of prompt) if (!PROMPTS.has(p)) throw new OAuthProtocolError('invalid_request', `unsupported prompt value: ${p}`);
  if (prompt.has('none') && prompt.size > 1) throw new OAuthProtocolError('invalid_request', 'prompt=none cannot be combined with other values');
  return prompt;
}

function parseMaxAge(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d{1,10}$/.test(value)) throw new OAuthProtocolError('invalid_request', 'max_age must be a non-negative integer number of seconds');
  return Number(value);
}

interface Transaction extends AuthorizationRequest {
  sub: string;
  authTime: number;
  /** Marks the transaction used in the store: one decision per consent page (RFC 6749 10.12). */
  id: string;
}

/** GET and POST /oauth/authorize (OIDC Core 3.1.2.1). */
export async function handleAuthorize(request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  const response = await authorize(request, context);
  return request.method === 'POST' ? afterPost(response) : response;
}

async function authorize(request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  await context.ready;
  const { params: p, repeated } = await readParams(request, context);
  // RFC 6749 3.1: a repeated parameter makes the request ambiguous; refuse it before trusting any of it.
  if (repeated) return errorPage(400, 'invalid_request', `The parameter ${repeated} was sent more than once.`);
  const issuer = issuerFor(context, request);

  // Until the client and its redirect URI are known to be genuine, an error page, never a redirect (RFC 6749 4.1.2.1).
  const client = p.client_id ? await context.store.getClient(p.client_id) : undefined;
  if (!client) return errorPage(400, 'invalid_client', 'The application that sent you here is not registered.');
  if (!p.redirect_uri) return errorPage(400, 'invalid_request', 'The request has no redirect_uri, which OpenID Connect requires.');
  if (!client.redirectUris.includes(p.redirect_uri)) {
    return errorPage(400, 'invalid_request', 'The redirect_uri of the request is not registered for this application.');
  }
  const redirectUri = p.redirect_uri;

  try {
    // OIDC Core 6.1, 6.2: request objects are not supported (discovery says so). Refused, never
    // ignored: their claims could differ from the plain parameters, and no code may answer them.
    if (p.request !== undefined) throw new OAuthProtocolError('request_not_supported', 'the request parameter is not supported: send the authorization parameters themselves');
    if (p.request_uri !== undefined) throw new OAuthProtocolError('request_uri_not_supported', 'the request_uri parameter is not supported: send the authorization parameters themselves');
    if (!p.response_type) throw new OAuthProtocolError('invalid_request', 'response_type is required');
    if (p.response_type !== 'code') throw new OAuthProtocolError('unsupported_response_type', 'only response_type=code is supported');
    // OIDC Core 3.1.2.1: a client asking for form_post or fragment wants the code kept out of the
    // query (history, logs); the query is the only mode (discovery's response_modes_supported), so
    // such a request is refused rather than answered in the query it asked to avoid.
    if (p.response_mode !== undefined && p.response_mode !== 'query') throw new OAuthProtocolError('invalid_request', 'response_mode must be query, the only one supported');
    if (!client.grants.includes('authorization_code')) throw new OAuthProtocolError('unauthorized_client', 'this client may not use the authorization code flow');
    if (!p.state) throw new OAuthProtocolError('invalid_request', 'state is required');
    // RFC 6749 A.5: state is VSCHAR; checked here so the user is not asked to consent to a request that must fail.
    if (!/^[\x20-\x7E]+$/.test(p.state)) throw new OAuthProtocolError('invalid_request', 'state must be printable ASCII (RFC 6749 A.5)');
    const scope = parseScope(p.scope, client);
    const codeChallenge = parsePkce(p, client);
    const prompt = parsePrompt(p.prompt);
    const maxAge = parseMaxAge(p.max_age);
    const authorization: AuthorizationRequest = { clientId: client.id, redirectUri, scope, state: p.state };
    if (p.nonce) authorization.nonce = p.nonce;
    if (codeChallenge) authorization.codeChallenge = codeChallenge;

    const now = nowSeconds(context);
    const loginAsked = await loginAskedAt(context, request, p);
    const loggedInAgain = loginAsked !== undefined;
    const user = await context.authenticate(request);

    const mustLogIn =
      !user ||
      (prompt.has('login') && !loggedInAgain) ||
      (maxAge !== undefined && !loggedInAgain && (user.auth_time === undefined || now - user.auth_time > maxAge));
    if (mustLogIn) {
      if (prompt.has('none')) throw new OAuthProtocolError('login_required', 'the user is not signed in');
      return loginRedirect(context, request, issuer, p);
    }
    if (loggedInAgain && user.auth_time !== undefined && user.auth_time < loginAsked) {
      throw new OAuthProtocolError('login_required', 'the user was asked to sign in again but did not');
    }
    const authTime = user.auth_time ?? loginAsked ?? now;

    const remembered = await context.store.getConsent(user.sub, client.id);
    const covered = remembered !== undefined && scope.every((s) => remembered.includes(s));
    if (prompt.has('consent') || !covered) {
      if (prompt.has('none')) throw new OAuthProtocolError('consent_required', 'the user has not approved this application yet');
      return renderConsent(context, issuer, client, user, { ...authorization, sub: user.sub, authTime, id: randomBytes(16).toString('base64url') });
    }
    return await issueAuthorizationCode(context, issuer, client, user, authorization, authTime);
  } catch (error) {
    if (!(error instanceof OAuthProtocolError)) throw error;
    return redirectError(redirectUri, issuer, p.state, error);
  }
}

function renderConsent(context: OAuthContext, issuer: string, client: OAuthClientRecord, user: OAuthUser, transaction: Transaction): PlatformResponse {
  const expires = nowSeconds(context) + TRANSACTION_SECONDS;
  const label = [user.name, user.preferred_username, user.email, user.sub].find((v): v is string => typeof v === 'string') ?? user.sub;
  return consentPage({
    action: `${issuer}/consent`,
    clientName: client.name,
    userLabel: label,
    scopes: transaction.scope.map((name) => ({ name, description: SCOPE_DESCRIPTIONS[name] ?? name })),
    // The sealed transaction is the CSRF token: bound to this user, this request and a deadline.
    transaction: seal(context.secret(), 'consent', transaction, expires),
    formTargets: ["'self'", new URL(transaction.redirectUri).origin],
  });
}

/** POST /oauth/consent: the Approve / Deny form. */
export async function handleConsent(request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  return afterPost(await decideConsent(request, context));
}

async function decideConsent(request: PlatformRequest, context: OAuthContext): Promise<PlatformResponse> {
  await context.ready;
  const form = ((await readBody(request, { limit: context.bodyLimit, accept: ['form'] })) ?? {}) as Params;
  const transaction = unseal<Transaction & { _e: number }>(context.secret(), 'consent', form.transaction, nowSeconds(context));
  if (typeof transaction?.id !== 'string') return errorPage(400, 'invalid_request', 'This approval form has expired or was altered. Start the sign-in again.');
  const user = await context.authenticate(request);
  if (!user || user.sub !== transaction.sub) {
    return errorPage(403, 'access_denied', 'You are no longer signed in as the user this approval was for. Start the sign-in again.');
  }
  const client = await context.store.getClient(transaction.clientId);
  if (!client || !client.redirectUris.includes(transaction.redirectUri)) {
    return errorPage(400, 'invalid_client', 'The application is no longer registered.');
  }
  // Before the form is used up: a Host that gives no issuer is a 400 the user can send again.
  const issuer = issuerFor(context, request);
  // Whatever the decision, the form counts once: a replayed Approve, or an Approve after Deny, is refused.
  if (!(await context.store.useOnce(`consent:${transaction.id}`, transaction._e * 1000))) {
    return errorPage(400, 'invalid_request', 'This approval form was already used. Start the sign-in again.');
  }
  const remembered = await context.store.getConsent(user.sub, client.id);
  if (form.decision !== 'approve') {
    // No to an application that was approved before (a prompt=consent, or more scopes) withdraws
    // that approval: its grants end and the next authorization asks again (docs/oauth.md).
    if (remembered !== undefined) {
      await context.store.revokeUserGrants(user.sub, client.id);
      context.emit({ type: 'grant.revoked', clientId: client.id, sub: user.sub });
    }
    return redirectError(transaction.redirectUri, issuer, transaction.state, new OAuthProtocolError('access_denied', 'the user denied the request'));
  }
  await context.store.saveConsent(user.sub, client.id, [...new Set([...(remembered ?? []), ...transaction.scope])]);
  const { sub: _sub, authTime, id: _id, _e, ...authorization } = transaction;
  return issueAuthorizationCode(context, issuer, client, user, authorization, authTime);
}
