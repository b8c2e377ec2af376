import { existsSync, readFileSync } from 'node:fs';

/**
 * The example's settings, read once from the environment: where it listens and is reached
 * (HOST, PORT, PUBLIC_URL), its demo relying party (DEMO_*), the courier upstream (COURIER_*),
 * where records live (STORE, REDIS_URL, DATABASE_URL), the token signing key, the default quota
 * (QUOTA_*), the secret of the demo's cookies and form tokens (SESSION_SECRET) and the admin
 * API's token (ADMIN_TOKEN; the admin API is off without it).
 */
export interface ExampleConfig {
  host: string;
  port: number;
  /** Where browsers reach the example; the OAuth issuer is `${publicUrl}/oauth`. */
  publicUrl: string;
  demoClientId: string;
  demoClientSecret: string;
  demoRedirectUri: string;
  courierUpstreamUrl: string | undefined;
  courierAppId: string;
  courierAppSecret: string;
  store: 'memory' | 'redis' | 'postgres';
  redisUrl: string;
  /** REDIS_CLUSTER_NODES: the startup nodes (`host:port`) of a Redis Cluster, used instead of REDIS_URL. */
  redisClusterNodes: string[] | undefined;
  databaseUrl: string;
  /** A private JWK or PEM, or undefined for a generated key. */
  signingKey: string | Record<string, unknown> | undefined;
  quota: { minute: number; day: number; month: number };
  /** Signs the demo's form tokens and the relying party's state cookie; shared by every process of one deployment. */
  sessionSecret: string;
  /** ADMIN_TOKEN: turns the admin API on at /admin, for callers sending it as a Bearer token. */
  adminToken: string | undefined;
}

function integer(name: string, value: string | undefined, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > max) throw new Error(`${name} must be a whole number from 0 to ${max}, got ${JSON.stringify(value)}`);
  return n;
}

/** OAUTH_SIGNING_KEY: a JWK (JSON), a PEM, or a path to a file holding either. */
function signingKey(value: string | undefined): ExampleConfig['signingKey'] {
  if (!value) return undefined;
  const text = !value.trim().startsWith('{') && !value.includes('-----BEGIN') && existsSync(value) ? readFileSync(value, 'utf8') : value;
  if (!text.trim().startsWith('{')) return text;
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (error) {
    throw new Error(`OAUTH_SIGNING_KEY looks like a JWK but is not valid JSON: ${(error as Error).message}`);
  }
}

function store(value: string | undefined): ExampleConfig['store'] {
  const name = (value || 'memory').toLowerCase();
  if (name === 'memory' || name === 'redis' || name === 'postgres') return name;
  throw new Error(`STORE must be memory, redis or postgres, got ${JSON.stringify(value)}`);
}

function clusterNodes(value: string | undefined): string[] | undefined {
  if (!value) return undefined;
  const nodes = value.split(',').map((node) => node.trim());
  for (const node of nodes) {
    const port = Number(/^[^\s,/]+:(\d{1,5})$/.exec(node)?.[1]);
    if (!(port >= 1 && port <= 65535)) throw new Error(`REDIS_CLUSTER_NODES must be host:port,host:port,..., got ${JSON.stringify(value)}`);
  }
  return nodes;
}

function adminToken(value: string | undefined): string | undefined {
  if (!value) return undefined;
  if (value.length < 32) throw new Error(`ADMIN_TOKEN must be at least 32 characters (e.g. openssl rand -hex 32), got ${value.length}`);
  return value;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): ExampleConfig {
  const host = env.HOST || '127.0.0.1';
  const port = integer('PORT', env.PORT, 3000, 65535);
  const publicUrl = (env.PUBLIC_URL || `http://${host}:${port}`).replace(/\/+$/, '');
  return {
    host,
    port,
    publicUrl,
    demoClientId: env.DEMO_CLIENT_ID || 'demo-client',
    demoClientSecret: env.DEMO_CLIENT_SECRET || 'demo-secret',
    demoRedirectUri: env.DEMO_REDIRECT_URI || `${publicUrl}/callback`,
    courierUpstreamUrl: env.COURIER_UPSTREAM_URL || undefined,
    courierAppId: env.COURIER_APP_ID || 'sandbox-app',
    courierAppSecret: env.COURIER_APP_SECRET || 'sandbox-secret',
    store: store(env.STORE),
    redisUrl: env.REDIS_URL || 'redis://127.0.0.1:6379',
    redisClusterNodes: clusterNodes(env.REDIS_CLUSTER_NODES),
    databaseUrl: env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    signingKey: signingKey(env.OAUTH_SIGNING_KEY),
    quota: {
      minute: integer('QUOTA_MINUTE', env.QUOTA_MINUTE, 60),
      day: integer('QUOTA_DAY', env.QUOTA_DAY, 1000),
      month: integer('QUOTA_MONTH', env.QUOTA_MONTH, 0),
    },
    sessionSecret: env.SESSION_SECRET || 'courier-platform-demo-session-secret',
    adminToken: adminToken(env.ADMIN_TOKEN),
  };
}
