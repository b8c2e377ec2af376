import type { Logger } from '../core/logger.js';
import { START_DEADLINE_MS, type StoreConnection } from '../core/store-connection.js';
import { StoreFailedError } from '../core/store-errors.js';
import { clientRecordOf } from './client-record.js';
import { hashClientSecret } from './client-secret.js';
import { OAuthUnavailableError } from './errors.js';
import { generateSigningKeyRing, keyRingOf, type KeyRing } from './keys.js';
import type { ResolvedOAuthOptions } from './options.js';
import type { OAuthClientRecord } from './store/types.js';

/**
 * What the OAuth server does once, asynchronously, before it answers: generate a signing key when
 * none is configured, hash the plain secrets of the configured clients (which are answered from
 * the options, see configured-clients.ts), warm the store's connection (a pg pool opens its
 * connections, a connecting Redis client is waited for, within START_DEADLINE_MS) and reach the
 * store once. `ready()` gives the first attempt's outcome; when it fails (a store that is down,
 * named with its address and error), each request tries again until one attempt succeeds, and is
 * answered 503 meanwhile.
 */
export function startup(options: ResolvedOAuthOptions, logger: Logger, store: { name: string; connection?: StoreConnection; reach(): Promise<unknown> }) {
  let keyRing = options.signingKeys.length > 0 ? keyRingOf(options.signingKeys) : undefined;
  const records: Promise<OAuthClientRecord[]> = Promise.all(
    options.clients.map(async (client) => clientRecordOf(client, client.secret === undefined ? client.secretHash : await hashClientSecret(client.secret))),
  );
  const start = async () => {
    keyRing ??= await generateSigningKeyRing();
    await records;
    if (store.connection) {
      await store.connection.warm(START_DEADLINE_MS).catch((error: unknown) => {
        throw new StoreFailedError(store.name, error);
      });
    }
    // One lookup: an unreachable or misconfigured store shows at start (and a PostgreSQL store runs its migration).
    await store.reach();
  };

  let outage = false;
  let lastFailed = false;
  let latest: Promise<void>;
  const attempt = (): Promise<void> => {
    lastFailed = false;
    latest = start().then(
      () => {
        if (outage) logger.info({}, 'the OAuth server started');
        outage = false;
      },
      (error: unknown) => {
        lastFailed = true;
        if (!outage) logger.error({ err: error }, 'the OAuth server could not start; /oauth answers 503 and tries again with each request');
        outage = true;
        throw new OAuthUnavailableError(error);
      },
    );
    return latest;
  };
  const first = attempt();
  // Reported through ready() and answered as a 503; never an unhandled rejection.
  first.catch(() => {});
  return {
    /** The first attempt, for `ready()`. */
    first,
    /** Resolves once started; after a failed attempt, makes the next one (shared by every caller waiting meanwhile). */
    ensure: (): Promise<void> => (lastFailed ? attempt() : latest),
    keyRing: (): KeyRing => keyRing!,
    /** The configured clients' records, once their secrets are hashed. */
    clients: (): Promise<OAuthClientRecord[]> => records,
  };
}
