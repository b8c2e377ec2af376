import type { OAuthStore } from './store/types.js';

/**
 * An OAuthStore that names every method of the contract, an optional one as `undefined` when the
 * store it wraps lacks it (callers test for those: `if (store.findAccessTokenSync)`). A layer built
 * as one does not compile until it handles each method the contract gains.
 */
export type StoreLayer = { [K in keyof Required<OAuthStore>]: OAuthStore[K] };
