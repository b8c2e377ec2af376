/**
 * EXAMPLE_FRAMEWORK (express default, koa, connect, fastify, hono) and EXAMPLE_RUNTIME (node
 * default; bun and deno with hono): which host `npm start` runs the example on (docs/example.md).
 */
import type { Site } from '../site.js';
import type { ExampleHost } from './host.js';

export const FRAMEWORKS = { express: 'Express', koa: 'Koa', connect: 'Connect', fastify: 'Fastify', hono: 'Hono' } as const;
export const RUNTIMES = ['node', 'bun', 'deno'] as const;

export type Framework = keyof typeof FRAMEWORKS;
export type RuntimeName = (typeof RUNTIMES)[number];

const list = (names: readonly string[]) => `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;

/** The host the environment asks for; a wrong value throws an error naming the variable and the values it takes. */
export function readHostChoice(env: Record<string, string | undefined> = process.env): { framework: Framework; runtime: RuntimeName } {
  const framework = (env.EXAMPLE_FRAMEWORK || 'express').toLowerCase();
  if (!Object.hasOwn(FRAMEWORKS, framework)) {
    throw new Error(`EXAMPLE_FRAMEWORK must be ${list(Object.keys(FRAMEWORKS))}, got ${JSON.stringify(env.EXAMPLE_FRAMEWORK)}`);
  }
  const runtime = (env.EXAMPLE_RUNTIME || 'node').toLowerCase();
  if (!(RUNTIMES as readonly string[]).includes(runtime)) {
    throw new Error(`EXAMPLE_RUNTIME must be ${list(RUNTIMES)}, got ${JSON.stringify(env.EXAMPLE_RUNTIME)}`);
  }
  if (runtime !== 'node' && framework !== 'hono') {
    throw new Error(`EXAMPLE_RUNTIME=${runtime} runs the Hono example only: set EXAMPLE_FRAMEWORK=hono, or EXAMPLE_RUNTIME=node`);
  }
  return { framework: framework as Framework, runtime: runtime as RuntimeName };
}

/** The framework's host, loaded alone: the other frameworks are never imported. */
export async function createHost(framework: Framework, site: Site): Promise<ExampleHost> {
  switch (framework) {
    case 'express':
      return (await import('./express.js')).createExpressHost(site);
    case 'koa':
      return (await import('./koa.js')).createKoaHost(site);
    case 'connect':
      return (await import('./connect.js')).createConnectHost(site);
    case 'fastify':
      return (await import('./fastify.js')).createFastifyHost(site);
    case 'hono':
      return (await import('./hono.js')).createHonoHost(site);
  }
}
