import type { OAuthStore } from './store/types.js';

/**
 * An OAuthStore that names every method of the contract, an optional one as `undefined` when the
 * store it wraps lacks it (callers test for those: `if (store.findAccessTokenSync)`). A layer built
 * as one does not compile until it handles each method the contract gains.
 */
export type StoreLayer = { [K in keyof Required<OAuthStore>]: OAuthStore[K] };

/**
 * Every method of `store` as it is: a layer spreads this and writes out only what it changes, so
 * a method the contract gains reaches the store through every layer until one says otherwise.
 */
export function passThrough(store: OAuthStore): StoreLayer {
  return {
    getClient: (clientId) => store.getClient(clientId),
    saveClient: (client) => store.saveClient(client),
    listClients: (page) => store.listClients(page),
    deleteClient: (clientId) => store.deleteClient(clientId),
    clientStatusSync: store.clientStatusSync?.bind(store),
    saveCode: (code) => store.saveCode(code),
    findCode: (ref) => store.findCode(ref),
    consumeCode: (ref) => store.consumeCode(ref),
    issueTokens: (tokens) => store.issueTokens(tokens),
    findAccessToken: (ref) => store.findAccessToken(ref),
    findAccessTokenSync: store.findAccessTokenSync?.bind(store),
    findRefreshToken: (ref) => store.findRefreshToken(ref),
    rotateRefreshToken: (presented, next, retryGraceMs, lateWriteMs) => store.rotateRefreshToken(presented, next, retryGraceMs, lateWriteMs),
    confirmRotation: (successor) => store.confirmRotation(successor),
    issueClientToken: (token) => store.issueClientToken(token),
    revokeAccessToken: (ref) => store.revokeAccessToken(ref),
    revokeGrant: (grantId) => store.revokeGrant(grantId),
    revokeUserGrants: (sub, clientId) => store.revokeUserGrants(sub, clientId),
    getConsent: (sub, clientId) => store.getConsent(sub, clientId),
    saveConsent: (sub, clientId, scopes) => store.saveConsent(sub, clientId, scopes),
    useOnce: (id, expiresAt) => store.useOnce(id, expiresAt),
  };
}
