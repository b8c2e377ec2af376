/** The security schemes of the API document, for the names the routes use. */
import type { SecuritySchemeName } from '../core/route-doc.js';
import { SCOPE_DESCRIPTIONS, SUPPORTED_SCOPES } from '../oauth/claims.js';

/** Scopes a token of the client itself may carry: `openid` and `offline_access` speak of a user. */
const USER_ONLY_SCOPES = new Set(['openid', 'offline_access']);

function scopes(filter: (scope: string) => boolean): Record<string, string> {
  return Object.fromEntries(SUPPORTED_SCOPES.filter(filter).map((scope) => [scope, SCOPE_DESCRIPTIONS[scope] ?? scope]));
}

function oauth2(issuer: string) {
  const tokenUrl = `${issuer}/token`;
  return {
    type: 'oauth2',
    description: 'Access tokens of the platform\'s authorization server; the same tokens pass `bearer`',
    flows: {
      authorizationCode: { authorizationUrl: `${issuer}/authorize`, tokenUrl, refreshUrl: tokenUrl, scopes: scopes(() => true) },
      clientCredentials: { tokenUrl, scopes: scopes((scope) => !USER_ONLY_SCOPES.has(scope)) },
    },
  };
}

const SCHEMES: Record<Exclude<SecuritySchemeName, 'oauth2'>, Record<string, string>> = {
  courierBasic: { type: 'http', scheme: 'basic', description: 'The upstream courier app id as the user, its app secret as the password' },
  clientBasic: { type: 'http', scheme: 'basic', description: 'An OAuth client: the client id and secret, each form-urlencoded first (RFC 6749 2.3.1)' },
  bearer: { type: 'http', scheme: 'bearer', description: "An access token identifying the calling application (the platform's, or the host's `quota.verifyToken`)" },
  adminBearer: { type: 'http', scheme: 'bearer', description: 'The operator token (`admin.token`), or whatever `admin.authorize` admits' },
};

/** `issuer` is where the OAuth endpoints answer; only the `oauth2` scheme needs it. */
export function securitySchemes(names: Iterable<SecuritySchemeName>, issuer: string | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const name of [...new Set(names)].sort()) {
    if (name !== 'oauth2') out[name] = SCHEMES[name];
    else if (issuer !== undefined) out[name] = oauth2(issuer);
  }
  return out;
}
