/**
 * The PostgreSQL stores share their schema by default and start together: every process runs the
 * OAuth store's and the quota store's migration (the usage history's table included) at once, on
 * a schema that does not exist yet. Every start must succeed (docs/stores.md#postgresql).
 */
import type pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { silentLogger } from '../../src/core/logger.js';
import { createPostgresOAuthStore } from '../../src/oauth/store/index.js';
import { createPlatform } from '../../src/platform.js';
import { createPostgresQuotaStore, createQuotaService } from '../../src/quota/index.js';
import { cheapClients, sharedSigningKey } from '../support/oauth.js';
import { describePostgres, uniqueName } from '../support/services.js';
import { dropSchema, newPool } from '../quota/store-helpers.js';

describePostgres('PostgreSQL stores sharing one fresh schema', () => {
  let pool: pg.Pool;
  const schemas: string[] = [];
  const freshSchema = (): string => {
    const schema = uniqueName('shared_start');
    schemas.push(schema);
    return schema;
  };
  beforeAll(() => {
    pool = newPool(12);
  });
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(pool, schema);
    await pool.end();
  });

  const tables = async (schema: string): Promise<number> =>
    (await pool.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = $1', [schema])).rows[0]!.n;

  it('migrate on their first calls at once, from several processes, every time', async () => {
    for (let round = 0; round < 10; round++) {
      const schema = freshSchema();
      // The OAuth stores start 0 to 9 ms after the quota stores: some round lands in another's migration.
      const firstCalls = Array.from({ length: 3 }, () => {
        const oauth = createPostgresOAuthStore({ pool, schema });
        const quota = createPostgresQuotaStore({ pool, schema });
        const later = new Promise((resolve) => setTimeout(resolve, round)).then(() => oauth.getClient('a'));
        return [quota.prepare(), quota.history!.read({ clientId: 'a', step: 'hour', from: 0, to: 1 }, undefined, () => {}), later];
      }).flat();
      const outcomes = await Promise.allSettled(firstCalls);
      expect(outcomes.filter((outcome) => outcome.status === 'rejected'), `round ${round}`).toEqual([]);
      // The OAuth store's seven tables, the quota's counters and rules, the usage history.
      expect(await tables(schema)).toBe(10);
    }
  });

  it('start together through ready(), from several processes, every time', async () => {
    const clients = await cheapClients();
    const signingKeys = [await sharedSigningKey()];
    for (let round = 0; round < 10; round++) {
      const schema = freshSchema();
      const starts = Array.from({ length: 3 }, () => {
        const platform = createPlatform({
          courier: false,
          quota: false,
          logger: silentLogger,
          oauth: { store: createPostgresOAuthStore({ pool, schema }), clients, signingKeys, publicUrl: 'http://127.0.0.1:9' },
        });
        return [platform.ready(), createQuotaService({ store: createPostgresQuotaStore({ pool, schema }) }).ready()];
      }).flat();
      const outcomes = await Promise.allSettled(starts);
      expect(outcomes.filter((outcome) => outcome.status === 'rejected'), `round ${round}`).toEqual([]);
      expect(await tables(schema)).toBe(10);
    }
  });
});
