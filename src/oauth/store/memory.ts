/**
 * The in-process OAuth store: the embedded default, and the reference the Redis and PostgreSQL
 * stores are checked against by the shared conformance suite.
 *
 * Bound: one entry per grant (per authorization) until its last part expires, and each entry has
 * a bounded shape (the code record, the current refresh token and at most EARLIER_REFRESH_TOKENS
 * earlier ones, two access tokens; see types.ts), so refreshing a grant never grows the store.
 * `size` counts the entries.
 *
 * Expiry works on timestamps from the injected clock, never on timers: a `setTimeout` longer than
 * 24.8 days overflows and fires at once, and a timer per record would keep the process busy.
 * Expired entries are swept instead, every so many new grants, so memory stays bounded by the live
 * grants however long the process runs. Every operation is synchronous inside, so nothing can
 * interleave between a check and the write that follows it.
 */
import { systemClock, type Clock } from '../../core/clock.js';
import { configurationError } from '../../core/errors.js';
import { checkClientRecord } from '../client-record.js';
import { clientPage } from './client-page.js';
import { deepFreeze } from '../../core/deep-freeze.js';
import { accessView, checkGrantId, clientGrantRecord, earlierTokenOutcome, grantIdOf, lateWriteMsOf, refreshView, storedAccess, type StoredGrant } from './grant-record.js';
import { earlierGeneration, installTokens, slotMatches, type AccessSlot, type Grant, type RefreshSlot } from './memory-grant.js';
import type { AccessTokenRecord, AuthorizationCodeRecord, OAuthClientRecord, OAuthStore, TokenRef } from './types.js';

export interface MemoryOAuthStoreOptions {
  /** Time source for expiry (default `Date.now`). */
  now?: Clock;
  /** Clients registered up front, as if passed to `saveClient`. */
  clients?: OAuthClientRecord[];
  /**
   * Minimum number of new grants between two sweeps of expired ones (default 1000). The actual
   * interval also grows with the number of grants held, so a sweep costs O(1) per grant amortised.
   */
  sweepEvery?: number;
}

/** The memory store exposes its housekeeping, so hosts and tests can observe it. */
export interface MemoryOAuthStore extends OAuthStore {
  /** Drops every expired grant now; answers how many went. */
  deleteExpired(): Promise<number>;
  /** Grant entries currently held, expired or not (clients and consents excluded). */
  readonly size: number;
  findAccessTokenSync(ref: TokenRef): AccessTokenRecord | undefined;
}

/**
 * @example
 * const store = createMemoryOAuthStore({ clients: [{ id: 'demo', name: 'Demo', redirectUris: ['https://app.example/cb'], scopes: ['openid'], grants: ['authorization_code'] }] });
 */
export function createMemoryOAuthStore(options: MemoryOAuthStoreOptions = {}): MemoryOAuthStore {
  const now = options.now ?? systemClock;
  const sweepEvery = options.sweepEvery ?? 1000;
  if (!Number.isInteger(sweepEvery) || sweepEvery < 1) {
    throw configurationError('invalid_option', 'sweepEvery', 'must be a positive integer');
  }

  const clients = new Map<string, string>();
  // Beside the records, so the guard learns a client's status without parsing its record.
  const statuses = new Map<string, 'active' | 'suspended'>();
  const consents = new Map<string, string>();
  /** One-time ids and their expiry, in insertion order (so, nearly in expiry order). */
  const used = new Map<string, number>();
  const grants = new Map<string, Grant>();
  /** The grant ids of each (sub, clientId) pair. */
  const byPair = new Map<string, Set<string>>();
  let grantsSinceSweep = 0;
  let sizeAfterSweep = 0;

  for (const client of options.clients ?? []) {
    const record = checkClientRecord(client);
    clients.set(record.id, JSON.stringify(record));
    statuses.set(record.id, record.status ?? 'active');
  }

  function drop(grantId: string): void {
    const grant = grants.get(grantId);
    if (!grant) return;
    grants.delete(grantId);
    if (grant.pair === undefined) return;
    const ids = byPair.get(grant.pair);
    ids?.delete(grantId);
    if (ids?.size === 0) byPair.delete(grant.pair);
  }

  /** The grant unless it is unknown or wholly expired. */
  function live(grantId: string): Grant | undefined {
    const grant = grants.get(grantId);
    return grant && grant.expiresAt > now() ? grant : undefined;
  }

  function liveCode(ref: TokenRef): Grant | undefined {
    const grant = live(ref.grantId);
    return grant && grant.codeHash === ref.hash && grant.codeExpiresAt > now() ? grant : undefined;
  }

  const matches = (slot: RefreshSlot | AccessSlot | undefined, hash: string) => slotMatches(slot, hash, now());

  /**
   * Sweeps once the grants created since the last sweep reach `sweepEvery` or the number the last
   * sweep left, whichever is larger: a sweep is O(grants), so this keeps it O(1) per grant
   * amortised while memory stays within about twice the live grants.
   */
  function created(): void {
    grantsSinceSweep += 1;
    if (grantsSinceSweep >= Math.max(sweepEvery, sizeAfterSweep)) sweep();
  }

  function sweep(): number {
    const at = now();
    const before = grants.size;
    for (const [grantId, grant] of grants) if (grant.expiresAt <= at) drop(grantId);
    grantsSinceSweep = 0;
    sizeAfterSweep = grants.size;
    return before - sizeAfterSweep;
  }

  function parsed(grant: Grant): StoredGrant {
    return (grant.parsed ??= deepFreeze(JSON.parse(grant.json) as StoredGrant));
  }

  const store: MemoryOAuthStore = {
    get size() {
      return grants.size;
    },

    async deleteExpired() {
      return sweep();
    },

    async getClient(clientId) {
      const json = clients.get(clientId);
      return json === undefined ? undefined : (JSON.parse(json) as OAuthClientRecord);
    },

    clientStatusSync: (clientId) => statuses.get(clientId),

    async saveClient(client) {
      const record = checkClientRecord(client);
      clients.set(record.id, JSON.stringify(record));
      statuses.set(record.id, record.status ?? 'active');
    },

    async listClients(page) {
      return clientPage([...clients.values()].map((json) => JSON.parse(json) as OAuthClientRecord), page);
    },

    async deleteClient(clientId) {
      statuses.delete(clientId);
      for (const [grantId, grant] of grants) if (parsed(grant).clientId === clientId) drop(grantId);
      for (const key of consents.keys()) if ((JSON.parse(key) as [string, string])[1] === clientId) consents.delete(key);
      return clients.delete(clientId);
    },

    async saveCode(code) {
      const { grantId } = code.ref;
      checkGrantId(grantId);
      drop(grantId);
      // An already expired code would only be swept again; storing nothing reads the same.
      if (code.expiresAt <= now()) return;
      const pair = consentKey(code.user.sub, code.clientId);
      grants.set(grantId, {
        json: JSON.stringify(code),
        codeHash: code.ref.hash,
        codeExpiresAt: code.expiresAt,
        consumed: false,
        generation: 0,
        pending: false,
        older: [],
        expiresAt: code.expiresAt,
        pair,
      });
      byPair.set(pair, (byPair.get(pair) ?? new Set()).add(grantId));
      created();
    },

    async findCode(ref) {
      // An exchanged code stays known while its grant lives, so a late replay still ends the grant (types.ts).
      const grant = live(ref.grantId);
      const known = grant && grant.codeHash !== '' && grant.codeHash === ref.hash && (grant.consumed || grant.codeExpiresAt > now());
      return known ? { ...(JSON.parse(grant.json) as AuthorizationCodeRecord), consumed: grant.consumed } : undefined;
    },

    async consumeCode(ref) {
      const grant = liveCode(ref);
      if (!grant || grant.consumed) return false;
      grant.consumed = true;
      return true;
    },

    async issueTokens(tokens) {
      const grant = live(grantIdOf(tokens));
      if (!grant || !grant.consumed || grant.generation !== 0) return false;
      installTokens(grant, tokens, 'first', now());
      return true;
    },

    async findAccessToken(ref) {
      return store.findAccessTokenSync(ref);
    },

    findAccessTokenSync(ref) {
      const grant = grants.get(ref.grantId);
      if (!grant) return undefined;
      const slot = matches(grant.access, ref.hash) ? grant.access : matches(grant.previousAccess, ref.hash) ? grant.previousAccess : undefined;
      if (!slot) return undefined;
      return (slot.frozen ??= deepFreeze(accessView(parsed(grant), { grantId: ref.grantId, hash: slot.hash }, { ...slot, scope: [...slot.scope] })));
    },

    async findRefreshToken(ref) {
      const grant = live(ref.grantId);
      if (!grant) return undefined;
      // The grant parsed once and deep-frozen, as the access tokens read it: a reader changes nothing stored.
      const record = parsed(grant) as AuthorizationCodeRecord;
      const at = { grantId: ref.grantId, hash: ref.hash };
      if (matches(grant.refresh, ref.hash)) return refreshView(record, at, grant.refresh!.expiresAt);
      const earlier = earlierGeneration(grant, ref.hash, now());
      const previous = grant.previousRefresh!;
      if (earlier === 'previous') return refreshView(record, at, previous.expiresAt, { rotatedAt: previous.rotatedAt });
      return earlier && refreshView(record, at, grant.older.find(([hash]) => hash === ref.hash)![1], {});
    },

    async rotateRefreshToken(presented, next, retryGraceMs = 0, lateWriteMs) {
      const grant = live(grantIdOf(next, presented));
      if (!grant) return 'invalid';
      if (matches(grant.refresh, presented.hash)) {
        installTokens(grant, next, 'rotate', now());
        return 'rotated';
      }
      const slot = { pending: grant.pending, rotatedAt: grant.previousRefresh?.rotatedAt ?? 0, currentSince: grant.refresh?.since ?? 0 };
      const outcome = earlierTokenOutcome(earlierGeneration(grant, presented.hash, now()), slot, now(), retryGraceMs, lateWriteMsOf(lateWriteMs));
      if (outcome !== 'retry') return outcome;
      installTokens(grant, next, 'retry', now());
      return 'rotated';
    },

    async confirmRotation(successor) {
      const grant = live(successor.grantId);
      if (grant?.refresh?.hash === successor.hash) grant.pending = false;
    },

    async issueClientToken(token) {
      const { grantId } = token.ref;
      checkGrantId(grantId);
      drop(grantId);
      if (token.expiresAt <= now()) return;
      grants.set(grantId, {
        json: JSON.stringify(clientGrantRecord(token)),
        // No code: an empty hash matches no presented one.
        codeHash: '',
        codeExpiresAt: 0,
        consumed: true,
        generation: 1,
        pending: false,
        older: [],
        access: { hash: token.ref.hash, ...storedAccess(token) },
        expiresAt: token.expiresAt,
      });
      created();
    },

    async revokeAccessToken(ref) {
      const grant = grants.get(ref.grantId);
      if (!grant) return;
      if (grant.access?.hash === ref.hash) grant.access = undefined;
      if (grant.previousAccess?.hash === ref.hash) grant.previousAccess = undefined;
    },

    async revokeGrant(grantId) {
      checkGrantId(grantId);
      const ended = live(grantId) !== undefined;
      drop(grantId);
      return ended;
    },

    async revokeUserGrants(sub, clientId) {
      const pair = consentKey(sub, clientId);
      let ended = 0;
      for (const grantId of [...(byPair.get(pair) ?? [])]) {
        if (live(grantId)) ended += 1;
        drop(grantId);
      }
      consents.delete(pair);
      return ended;
    },

    async getConsent(sub, clientId) {
      const json = consents.get(consentKey(sub, clientId));
      return json === undefined ? undefined : (JSON.parse(json) as string[]);
    },

    async saveConsent(sub, clientId, scopes) {
      consents.set(consentKey(sub, clientId), JSON.stringify(scopes));
    },

    async useOnce(id, expiresAt) {
      const at = now();
      // Forget the oldest expired ids first, so the map holds about one deadline's worth.
      for (const [oldId, until] of used) {
        if (until > at) break;
        used.delete(oldId);
      }
      const until = used.get(id);
      if (until !== undefined && until > at) return false;
      used.delete(id);
      used.set(id, expiresAt);
      return true;
    },
  };
  return store;
}


/** JSON of the pair: unambiguous whatever characters sub and clientId hold. */
function consentKey(sub: string, clientId: string): string {
  return JSON.stringify([sub, clientId]);
}
