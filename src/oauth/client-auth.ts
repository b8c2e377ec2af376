/**
 * Client authentication (RFC 6749 2.3), shared by the token, revocation (RFC 7009 2.1) and
 * introspection (RFC 7662 2.1) endpoints: HTTP Basic for a confidential client, `client_id` alone
 * for a public one, every secret checked through the brute-force throttle.
 */
import { createHash } from 'node:crypto';
import { readBasicAuth } from '../core/basic-auth.js';
import { header, type PlatformRequest } from '../core/http.js';
import { isClientId } from './client-record.js';
import { verifyClientSecret } from './client-secret.js';
import type { OAuthContext } from './context.js';
import { callerAt, ownAddress, type Caller } from './known-callers.js';
import { OAuthProtocolError } from './errors.js';
import type { BruteForceOptions } from './options.js';
import type { OAuthClientRecord } from './store/types.js';
import type { CountedKey } from './throttle.js';

const CHALLENGE = { 'www-authenticate': 'Basic realm="oauth", charset="UTF-8"' };
/** Verified against when the client does not exist, so the time taken does not tell (RFC 6749 10.2 spirit). */
const DECOY_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';

export function invalidClient(): OAuthProtocolError {
  return new OAuthProtocolError('invalid_client', 'client authentication failed', 401, CHALLENGE);
}

/** RFC 6749 2.3.1: the client id and secret are form-urlencoded before Basic encoding. */
function formDecode(value: string): string {
  try {
    return decodeURIComponent(value.replace(/\+/g, ' '));
  } catch {
    throw invalidClient();
  }
}

interface PresentedCredentials {
  clientId: string;
  secret?: string;
}

/**
 * A browser navigating to the endpoint (a form or a link on some page): a browser sends the user
 * and password of a URL (`https://client:guess@…`) as Basic credentials when the 401 challenges
 * it, so any site could make its visitors' browsers guess, counted at their addresses. A client's
 * server sends none of these headers.
 */
function fromBrowserNavigation(request: PlatformRequest): boolean {
  const mode = header(request, 'sec-fetch-mode');
  return mode === 'navigate' || mode === 'nested-navigate';
}

function presentedCredentials(request: PlatformRequest, form: Record<string, string>): PresentedCredentials {
  const auth = readBasicAuth(request);
  if (auth.kind === 'malformed') throw invalidClient();
  if (auth.kind === 'basic') {
    // Checked by nobody and counted nowhere: a secret typed into a URL is no client authenticating.
    if (fromBrowserNavigation(request)) throw invalidClient();
    const clientId = formDecode(auth.user);
    // RFC 6749 2.3: one authentication method per request.
    if (form.client_secret !== undefined) throw new OAuthProtocolError('invalid_request', 'send client credentials either with HTTP Basic or in the body, not both');
    if (form.client_id !== undefined && form.client_id !== clientId) throw new OAuthProtocolError('invalid_request', 'client_id in the body differs from the authenticated client');
    return { clientId, secret: formDecode(auth.password) };
  }
  if (form.client_secret !== undefined) throw new OAuthProtocolError('invalid_client', 'authenticate the client with HTTP Basic (client_secret_basic)', 401, CHALLENGE);
  if (!form.client_id) throw invalidClient();
  return { clientId: form.client_id };
}

/**
 * The presented secret is right; an unknown client costs the same scrypt work as a wrong secret.
 * A failure against the record this process kept is checked once more against the store's: the
 * secret may have been rotated through another process a moment ago.
 */
async function verifyPresented(presented: Required<PresentedCredentials>, client: OAuthClientRecord | undefined, context: OAuthContext): Promise<OAuthClientRecord | undefined> {
  if (!client) {
    await verifyClientSecret(presented.secret, DECOY_HASH);
    return undefined;
  }
  if (await secretMatches(client, presented.secret, context)) return client;
  const fresh = await context.rereadClient(client.id);
  const changed = fresh?.secretHash !== client.secretHash || fresh?.previousSecretHash !== client.previousSecretHash;
  return fresh && changed && (await secretMatches(fresh, presented.secret, context)) ? fresh : undefined;
}

async function secretMatches(client: OAuthClientRecord, secret: string, context: OAuthContext): Promise<boolean> {
  if (client.secretHash && (await context.secrets.verify(secret, client.secretHash))) return true;
  const previous = previousSecretHash(client, context);
  return previous !== undefined && (await context.secrets.verify(secret, previous));
}

/** After a rotation the previous secret works until its overlap ends (docs/operator.md). */
function previousSecretHash(client: OAuthClientRecord, context: OAuthContext): string | undefined {
  return (client.previousSecretValidUntil ?? 0) > context.now() ? client.previousSecretHash : undefined;
}

/**
 * A secret this process verified minutes ago against the client's current hashes: presenting it
 * again is no guess, so it needs neither scrypt nor the brute-force limit, nor its store round
 * trips (docs/performance.md).
 */
function remembered(client: OAuthClientRecord | undefined, secret: string, context: OAuthContext): client is OAuthClientRecord {
  if (!client?.secretHash) return false;
  if (context.secrets.remembers(secret, client.secretHash)) return true;
  const previous = previousSecretHash(client, context);
  return previous !== undefined && context.secrets.remembers(secret, previous);
}

/**
 * RFC 6749 10.10: failures count per caller address and client id, so a guesser slows itself
 * down and never the client it guesses at, and per caller address, so one address trying many
 * client ids is slowed too. No count is kept per client id alone: a client id is public (it is in
 * every authorization URL), and such a count would let anyone lock the client out.
 */
const ADDRESS = 'ip';
const ADDRESS_AND_CLIENT = 'ip+client';

/** The failures each kind of key allows, for `createFailureThrottle`. */
export function clientAuthFailureLimits(options: Required<BruteForceOptions>): Record<string, number> {
  return { [ADDRESS]: options.addressFailures, [ADDRESS_AND_CLIENT]: options.clientAuthFailures };
}

function countedKeys(address: string, clientId: string): CountedKey[] {
  // JSON keeps the pair apart whatever characters a client id holds.
  return [
    { kind: ADDRESS, id: address },
    { kind: ADDRESS_AND_CLIENT, id: JSON.stringify([address, clientId]) },
  ];
}

function failed(clientId: string, context: OAuthContext): OAuthProtocolError {
  // An id no client can have is not logged as sent: any caller could write megabytes a request.
  context.logger.info(isClientId(clientId) ? { clientId } : { clientIdLength: clientId.length }, 'client authentication failed');
  context.telemetry.clientAuthFailed();
  return invalidClient();
}

/**
 * RFC 6749 2.3.1 and 10.10: every attempt whose secret must be checked reserves a failure on the
 * caller's address, and on the address with the client id, first, so no burst of guesses runs
 * more checks than the limit. A success gives back only its own reservation: failures made by
 * others stay counted. Attempts from one address with the same credentials at the same time are
 * one check and share its answer: a client's burst of requests before its secret is remembered
 * reserves one failure, not one each, so it cannot reach its own limit; a repeated guess is no
 * new guess.
 */
export async function authenticateClient(request: PlatformRequest, form: Record<string, string>, context: OAuthContext): Promise<OAuthClientRecord> {
  const presented = presentedCredentials(request, form);
  // Read before the limit: a store failure here reserved nothing, and a remembered secret skips it.
  const known = await context.store.getClient(presented.clientId);
  // A public client has no secret to guess (it proves itself with PKCE): a password for it is
  // wrong input, refused without touching any count, so nobody can lock it out.
  if (known && !known.secretHash) {
    if (presented.secret === undefined) return known;
    throw failed(presented.clientId, context);
  }
  // No secret, no guess: a client with a secret (or an unknown one) named without one is refused
  // without touching any count. A page on another site can make its visitors' browsers send such
  // forms (a client secret in a header needs a preflight the platform never grants), and counting
  // them would let it lock a client out of every visitor's address.
  const { secret } = presented;
  if (secret === undefined) throw failed(presented.clientId, context);
  const ip = context.clientIp(request);
  const caller = callerAt(ip);
  const rightAndRemembered = remembered(known, secret, context);
  if (rightAndRemembered && !context.lockedAddresses.isLocked(caller.counted)) return provedBy(caller, known, context);
  // The caller's /56 was answered 429: a known caller of the client whose own address was not
  // is judged as any caller outside it would be, and a remembered secret skips the limit. The
  // lookup is made whether or not the secret is right, so that no caller in the /56 can tell a
  // right secret from a wrong one by the store work (and the time) its 429 took.
  let isKnown: boolean | undefined;
  if (ownAddress(caller) && context.lockedAddresses.isLocked(caller.counted) && !context.lockedAddresses.isLocked(caller.exact)) {
    isKnown = await context.knownCallers.isKnown(presented.clientId, caller.exact);
    if (isKnown && rightAndRemembered) return provedBy(caller, known, context);
  }
  // Hashed: the secret stays out of the map, which lives only as long as the check. By the exact
  // address: callers of one /56 may meet different limits (a known caller and a stranger).
  const key = createHash('sha256').update(JSON.stringify([caller.exact, presented.clientId, secret])).digest('base64url');
  const running = context.clientChecks.get(key);
  if (running) return running;
  const check = checkPresented(caller, isKnown, { clientId: presented.clientId, secret }, known, context).finally(() => context.clientChecks.delete(key));
  context.clientChecks.set(key, check);
  return check;
}

/**
 * The caller proved the client's secret: it is known to the client from its own address, where
 * the limits count more than that address. An IPv4 address is counted as it is: whoever shares it
 * (behind one NAT) is the same caller to the limits, known or not, so it is never marked.
 */
async function provedBy(caller: Caller, client: OAuthClientRecord, context: OAuthContext): Promise<OAuthClientRecord> {
  if (ownAddress(caller)) await context.knownCallers.proved(client.id, caller.exact);
  return client;
}

/**
 * The attempt, counted on the caller's /56 (RFC 6749 10.10). When others' failures filled that
 * count, a caller that proved this client's secret from its own address recently is counted on
 * that address instead: a neighbour in the /56 (another customer of a hosting provider) never
 * locks the client's servers out. Nobody becomes known without the secret, and an address that
 * is not known meets the /56's limit as before, so guesses spread over the /56 stay bounded.
 * `isKnown`: what authenticateClient's lookup answered, when it made one (one lookup a request).
 */
async function attemptFor(caller: Caller, isKnown: boolean | undefined, clientId: string, context: OAuthContext): Promise<{ retryAfter: number; release(): Promise<void>; lockedAt: string }> {
  const attempt = await context.clientAuthThrottle.attempt(countedKeys(caller.counted, clientId));
  const onItsNetwork = { retryAfter: attempt.retryAfter, release: () => attempt.release(), lockedAt: caller.counted };
  if (attempt.retryAfter === 0 || !ownAddress(caller)) return onItsNetwork;
  // Other callers of the /56 get 429 for the right secret too: the remembered secret stops skipping the limit there.
  context.lockedAddresses.lock(caller.counted, attempt.retryAfter);
  if (!(isKnown ?? (await context.knownCallers.isKnown(clientId, caller.exact)))) return onItsNetwork;
  const own = await context.clientAuthThrottle.attempt(countedKeys(caller.exact, clientId));
  return { retryAfter: own.retryAfter, release: () => own.release(), lockedAt: caller.exact };
}

async function checkPresented(caller: Caller, isKnown: boolean | undefined, presented: Required<PresentedCredentials>, known: OAuthClientRecord | undefined, context: OAuthContext): Promise<OAuthClientRecord> {
  const attempt = await attemptFor(caller, isKnown, presented.clientId, context);
  if (attempt.retryAfter > 0) {
    context.lockedAddresses.lock(attempt.lockedAt, attempt.retryAfter);
    throw new OAuthProtocolError('invalid_client', `too many failed client authentications; retry in ${attempt.retryAfter} seconds`, 429, {
      'retry-after': String(attempt.retryAfter),
    });
  }
  // The reservation stays unless the secret is right: it is this failure. That holds when the
  // recheck against the store fails (a 503) too: the secret was compared by then, and found wrong
  // against the record this process holds, so the caller has had its guess.
  const client = await verifyPresented(presented, known, context);
  if (!client) throw failed(presented.clientId, context);
  // A right secret is answered whatever the give-back meets: one the store fails is made once it
  // answers again (docs/oauth.md, "Brute-force limits").
  await attempt.release().catch(() => undefined);
  return provedBy(caller, client, context);
}
