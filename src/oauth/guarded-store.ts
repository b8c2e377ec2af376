/**
 * The OAuth store with every call under the store guard: the deadline, the outage log and, for a
 * connection pool, the local queue (docs/stores.md#deadlines-and-outages).
 */
import { isThenable } from '../core/maybe-promise.js';
import type { StoreGuard } from '../core/store-guard.js';
import type { StoreLayer } from './store-layer.js';
import type { OAuthStore } from './store/types.js';

/**
 * Without a lane a method runs at once, and an answer that is not a promise (an in-process store's)
 * passes untouched: the quota guard stays synchronous on the memory store. With a lane a method runs
 * only once it has a connection, so its answer is a promise.
 */
function guardedCalls(guard: StoreGuard) {
  if (guard.queues) {
    return {
      run: <T>(work: () => Promise<T>): Promise<T> => guard.run(() => Promise.resolve(work())),
      // Only a pg pool has a lane, and no store on one answers synchronously.
      runSync: <T>(work: () => T): T => guard.run(() => Promise.resolve(work())) as T,
    };
  }
  const runSync = <T>(work: () => T): T => {
    const answer = work();
    return isThenable(answer) ? (guard.run(() => answer) as T) : answer;
  };
  return { run: runSync, runSync };
}

export function guardedStore(inner: OAuthStore, guard: StoreGuard): StoreLayer {
  const { run, runSync } = guardedCalls(guard);
  const findAccessTokenSync = inner.findAccessTokenSync?.bind(inner);
  const clientStatusSync = inner.clientStatusSync?.bind(inner);
  return {
    getClient: (clientId) => run(() => inner.getClient(clientId)),
    saveClient: (client) => run(() => inner.saveClient(client)),
    listClients: (page) => run(() => inner.listClients(page)),
    // Many round trips (a SCAN on Redis, chunks on PostgreSQL), each told to the guard: a long deletion is not an outage.
    deleteClient: (clientId) => guard.run((call) => Promise.resolve(inner.deleteClient(clientId, call))),
    saveCode: (code) => run(() => inner.saveCode(code)),
    findCode: (ref) => run(() => inner.findCode(ref)),
    consumeCode: (ref) => run(() => inner.consumeCode(ref)),
    issueTokens: (tokens) => run(() => inner.issueTokens(tokens)),
    findAccessToken: (ref) => run(() => inner.findAccessToken(ref)),
    findAccessTokenSync: findAccessTokenSync && ((ref) => runSync(() => findAccessTokenSync(ref))),
    clientStatusSync: clientStatusSync && ((clientId) => runSync(() => clientStatusSync(clientId))),
    findRefreshToken: (ref) => run(() => inner.findRefreshToken(ref)),
    rotateRefreshToken: (presented, next, retryGraceMs, lateWriteMs) => run(() => inner.rotateRefreshToken(presented, next, retryGraceMs, lateWriteMs)),
    confirmRotation: (successor) => run(() => inner.confirmRotation(successor)),
    issueClientToken: (token) => run(() => inner.issueClientToken(token)),
    revokeAccessToken: (ref) => run(() => inner.revokeAccessToken(ref)),
    revokeGrant: (grantId) => run(() => inner.revokeGrant(grantId)),
    revokeUserGrants: (sub, clientId) => run(() => inner.revokeUserGrants(sub, clientId)),
    getConsent: (sub, clientId) => run(() => inner.getConsent(sub, clientId)),
    saveConsent: (sub, clientId, scopes) => run(() => inner.saveConsent(sub, clientId, scopes)),
    useOnce: (id, expiresAt) => run(() => inner.useOnce(id, expiresAt)),
  };
}
