/**
 * The in-process OAuth store: the embedded default, and the reference the Redis and PostgreSQL
 * stores are checked against by the shared conformance suite.
 *
 * Expiry works on timestamps from the injected clock, never on timers: a `setTimeout` longer than
 * 24.8 days overflows and fires at once, and a timer per record would keep the process busy.
 * Expired records are swept instead, every so many writes, so memory stays bounded by the live
 * records however long the process runs.
 */
import { systemClock, type Clock } from '../../core/clock.js';
import { configurationError } from '../../core/errors.js';
import { checkClientRecord } from '../client-record.js';
import { deepFreeze } from '../../core/deep-freeze.js';
import type {
  AccessTokenRecord,
  AuthorizationCodeRecord,
  ConsumedMarker,
  OAuthClientRecord,
  OAuthStore,
  RefreshTokenRecord,
  TokenRef,
} from './types.js';

export interface MemoryOAuthStoreOptions {
  /** Time source for expiry (default `Date.now`). */
  now?: Clock;
  /** Clients registered up front, as if passed to `saveClient`. */
  clients?: OAuthClientRecord[];
  /**
   * Minimum number of writes between two sweeps of expired records (default 1000). The actual
   * interval also grows with the number of records held, so a sweep costs O(1) per write amortised.
   */
  sweepEvery?: number;
}

/** The memory store exposes its housekeeping, so hosts and tests can observe it. */
export interface MemoryOAuthStore extends OAuthStore {
  /** Drops every expired code, token and lapsed revocation now; answers how many went. */
  deleteExpired(): Promise<number>;
  /**
   * Codes, tokens and revocations currently held, expired or not (clients and consents excluded),
   * counted from the maps themselves.
   */
  readonly size: number;
  findAccessTokenSync(ref: TokenRef): AccessTokenRecord | undefined;
}

/**
 * Records are kept as JSON text, as the Redis and PostgreSQL stores keep them: a record that
 * survives here survives there too, and nothing a caller does to its object afterwards reaches
 * the store. Reads return a fresh copy, except access tokens (below).
 */
interface Entry {
  json: string;
  expiresAt: number;
  consumed: boolean;
  /**
   * The access token's record, parsed once on first read and deep-frozen: every guarded call
   * reads it, and parsing the JSON each time was the largest cost of the memory guard.
   */
  frozen?: AccessTokenRecord;
}

/** Everything of one grant sits together, so revoking it is one map operation. */
interface Grant {
  codes: Map<string, Entry>;
  access: Map<string, Entry>;
  refresh: Map<string, Entry>;
  /** Until when `saveTokens` refuses this grant (ms); 0 when never revoked. */
  revokedUntil: number;
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
  const consents = new Map<string, string>();
  const grants = new Map<string, Grant>();
  let writesSinceSweep = 0;
  let sizeAfterSweep = 0;

  for (const client of options.clients ?? []) {
    const record = checkClientRecord(client);
    clients.set(record.id, JSON.stringify(record));
  }

  function grantOf(grantId: string): Grant {
    checkGrantId(grantId);
    let grant = grants.get(grantId);
    if (!grant) {
      grant = { codes: new Map(), access: new Map(), refresh: new Map(), revokedUntil: 0 };
      grants.set(grantId, grant);
    }
    return grant;
  }

  function put(map: Map<string, Entry>, record: { ref: TokenRef; expiresAt: number }): void {
    // An already expired record would only be swept again; storing nothing reads the same.
    if (record.expiresAt <= now()) {
      map.delete(record.ref.hash);
      return;
    }
    map.set(record.ref.hash, { json: JSON.stringify(record), expiresAt: record.expiresAt, consumed: false });
  }

  /** The live entry behind a ref, or undefined; never creates a grant. */
  function live(pick: (grant: Grant) => Map<string, Entry>, ref: TokenRef): Entry | undefined {
    const grant = grants.get(ref.grantId);
    const entry = grant && pick(grant).get(ref.hash);
    return entry && entry.expiresAt > now() ? entry : undefined;
  }

  /**
   * Sweeps once the writes since the last sweep reach `sweepEvery` or the number of records the
   * last sweep left, whichever is larger: a sweep is O(records), so this keeps writes O(1)
   * amortised while memory stays within about twice the live records.
   */
  function wrote(): void {
    writesSinceSweep += 1;
    if (writesSinceSweep >= Math.max(sweepEvery, sizeAfterSweep)) sweep();
  }

  function sweep(): number {
    const at = now();
    const before = countRecords();
    for (const [grantId, grant] of grants) {
      for (const map of [grant.codes, grant.access, grant.refresh]) {
        for (const [hash, entry] of map) {
          if (entry.expiresAt <= at) map.delete(hash);
        }
      }
      if (grant.revokedUntil <= at) grant.revokedUntil = 0;
      if (grant.codes.size + grant.access.size + grant.refresh.size === 0 && grant.revokedUntil === 0) {
        grants.delete(grantId);
      }
    }
    writesSinceSweep = 0;
    sizeAfterSweep = countRecords();
    return before - sizeAfterSweep;
  }

  function countRecords(): number {
    let count = 0;
    for (const grant of grants.values()) {
      count += grant.codes.size + grant.access.size + grant.refresh.size + (grant.revokedUntil === 0 ? 0 : 1);
    }
    return count;
  }

  function withMarker<T>(entry: Entry): T & ConsumedMarker {
    return { ...(JSON.parse(entry.json) as T), consumed: entry.consumed };
  }

  const store: MemoryOAuthStore = {
    get size() {
      return countRecords();
    },

    async deleteExpired() {
      return sweep();
    },

    async getClient(clientId) {
      const json = clients.get(clientId);
      return json === undefined ? undefined : (JSON.parse(json) as OAuthClientRecord);
    },

    async saveClient(client) {
      const record = checkClientRecord(client);
      clients.set(record.id, JSON.stringify(record));
    },

    async saveCode(code) {
      put(grantOf(code.ref.grantId).codes, code);
      wrote();
    },

    async findCode(ref) {
      const entry = live((grant) => grant.codes, ref);
      return entry && withMarker<AuthorizationCodeRecord>(entry);
    },

    async consumeCode(ref) {
      // Single-threaded: nothing can interleave between the check and the write.
      const entry = live((grant) => grant.codes, ref);
      if (!entry || entry.consumed) return false;
      entry.consumed = true;
      return true;
    },

    async saveTokens({ access, refresh }) {
      checkSameGrant(access, refresh);
      const grant = grantOf(access.ref.grantId);
      if (grant.revokedUntil > now()) return false;
      put(grant.access, access);
      if (refresh) put(grant.refresh, refresh);
      wrote();
      return true;
    },

    async findAccessToken(ref) {
      return store.findAccessTokenSync(ref);
    },

    findAccessTokenSync(ref) {
      const entry = live((grant) => grant.access, ref);
      if (!entry) return undefined;
      return (entry.frozen ??= deepFreeze(JSON.parse(entry.json) as AccessTokenRecord));
    },

    async findRefreshToken(ref) {
      const entry = live((grant) => grant.refresh, ref);
      return entry && withMarker<RefreshTokenRecord>(entry);
    },

    async rotateRefreshToken(ref) {
      const entry = live((grant) => grant.refresh, ref);
      if (!entry || entry.consumed) return false;
      entry.consumed = true;
      return true;
    },

    async revokeGrant(grantId, until) {
      const grant = grantOf(grantId);
      grant.access.clear();
      grant.refresh.clear();
      // Keep the later deadline when a grant is revoked twice; a lapsed one is not worth holding.
      if (until > now() && until > grant.revokedUntil) grant.revokedUntil = until;
      wrote();
    },

    async getConsent(sub, clientId) {
      const json = consents.get(consentKey(sub, clientId));
      return json === undefined ? undefined : (JSON.parse(json) as string[]);
    },

    async saveConsent(sub, clientId, scopes) {
      consents.set(consentKey(sub, clientId), JSON.stringify(scopes));
    },
  };
  return store;
}

/** JSON of the pair: unambiguous whatever characters sub and clientId hold. */
function consentKey(sub: string, clientId: string): string {
  return JSON.stringify([sub, clientId]);
}

function checkGrantId(grantId: string): void {
  if (typeof grantId !== 'string' || grantId === '') throw configurationError('invalid_argument', 'grantId', 'must be a non-empty string');
}

function checkSameGrant(access: AccessTokenRecord, refresh: RefreshTokenRecord | undefined): void {
  if (refresh && refresh.ref.grantId !== access.ref.grantId) {
    throw configurationError('invalid_argument', 'tokens.refresh.ref.grantId', 'must be the grant of the access token');
  }
}
