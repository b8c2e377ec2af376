/** Which user claims each scope releases (OIDC Core 5.4). `sub` is always released. */
export const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  profile: [
    'name', 'family_name', 'given_name', 'middle_name', 'nickname', 'preferred_username',
    'profile', 'picture', 'website', 'gender', 'birthdate', 'zoneinfo', 'locale', 'updated_at',
  ],
  email: ['email', 'email_verified'],
  address: ['address'],
  phone: ['phone_number', 'phone_number_verified'],
};

export const SUPPORTED_SCOPES = ['openid', 'offline_access', ...Object.keys(SCOPE_CLAIMS)] as const;

export const SUPPORTED_CLAIMS = ['sub', 'iss', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', ...Object.values(SCOPE_CLAIMS).flat()];

/** Plain words for the consent page. */
export const SCOPE_DESCRIPTIONS: Readonly<Record<string, string>> = {
  openid: 'Sign you in with your account',
  profile: 'See your name and basic profile',
  email: 'See your email address',
  address: 'See your postal address',
  phone: 'See your phone number',
  offline_access: 'Keep access while you are away (refresh tokens)',
};

/** The claims of `claims` that `scope` allows, always with `sub`. */
export function claimsForScope(sub: string, claims: Record<string, unknown>, scope: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = { sub };
  for (const s of scope) {
    for (const name of SCOPE_CLAIMS[s] ?? []) {
      if (claims[name] !== undefined) out[name] = claims[name];
    }
  }
  return out;
}
