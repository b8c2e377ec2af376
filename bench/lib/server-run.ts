/**
 * The frame of a scenario whose servers use the run's Redis keys and PostgreSQL schema: the run
 * token, the schema, the runner's store connections and the shared signing key, and one teardown
 * that stops the servers and deletes what the run created, also when set-up fails half-way.
 */
import { sharedSigningKey } from './oauth.js';
import type { ServerProcess } from './servers.js';
import { connectRunStores, runToken, type RunStores } from './stores.js';

export interface ServerRun {
  /** In every key, schema and connection name of the run (`lib/stores.ts`). */
  token: string;
  /** `<token>_<label>`: the run's PostgreSQL schema, dropped by teardown. */
  schema: string;
  stores: RunStores;
  /** The private signing key (JWK JSON) every server of the bench shares. */
  key: string;
  /** Add every started server here: teardown stops them. */
  servers: ServerProcess[];
  teardown(): Promise<void>;
}

/** Runs `setUp` inside a fresh run; if it throws, tears the run down before passing the error on. */
export async function withServerRun<T>(label: string, setUp: (run: ServerRun) => Promise<T>): Promise<T> {
  const token = runToken(label);
  const schema = `${token}_${label}`;
  const servers: ServerProcess[] = [];
  let stores: RunStores | undefined;
  const teardown = async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await stores?.cleanup();
  };
  try {
    stores = await connectRunStores(token, [schema]);
    return await setUp({ token, schema, stores, key: await sharedSigningKey(), servers, teardown });
  } catch (error) {
    await teardown();
    throw error;
  }
}
