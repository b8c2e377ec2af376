/**
 * `npm start`: the example on the host EXAMPLE_FRAMEWORK names, and for Hono on the runtime
 * EXAMPLE_RUNTIME names (docs/example.md), listening on HOST:PORT once the platform is ready
 * (signing keys loaded, the demo client stored). Started by Node for Bun or Deno, it runs itself
 * again under that runtime's binary from the project's devDependencies. A failure to start (a
 * wrong setting, a store that cannot be reached, a port in use) is printed as one line, and the
 * process exits with 1.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readConfig, type ExampleConfig } from './config.js';
import { FRAMEWORKS, createHost, readHostChoice, type Framework, type RuntimeName } from './hosts/choice.js';
import { stopExample, type ExampleHost, type Listening } from './hosts/host.js';
import { RUNTIME, runtimeLabel } from './hosts/runtime.js';
import { createSite } from './site.js';

/** The error's own words and those of its causes, without a stack: start failures are the operator's to fix. */
function reason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const own = error.message || (error as NodeJS.ErrnoException).code || error.name;
  return error.cause === undefined ? own : `${own} (${reason(error.cause)})`;
}

function listenFailure(error: NodeJS.ErrnoException, { host, port }: ExampleConfig): string {
  switch (error.code) {
    case 'EADDRINUSE':
      return `port ${port} is in use; set PORT=<a free port> (or stop what listens on ${host}:${port}) and start again`;
    case 'EACCES':
      return `port ${port} needs privileges this process lacks; set PORT to 1024 or above`;
    case 'EADDRNOTAVAIL':
      return `HOST=${host} is not an address of this machine; set HOST to one of its addresses (127.0.0.1, 0.0.0.0)`;
    default:
      return `cannot listen on ${host}:${port}: ${reason(error)}`;
  }
}

/** Where STORE points, without credentials: a store out of reach is the usual reason not to start. */
function storeLocation({ store, redisUrl, databaseUrl }: ExampleConfig): string {
  if (store === 'memory') return '';
  try {
    return ` (STORE=${store} at ${new URL(store === 'redis' ? redisUrl : databaseUrl).host})`;
  } catch {
    return ` (STORE=${store})`;
  }
}

function exit(message: string): never {
  console.error(`courier-platform example: ${message}`);
  process.exit(1);
}

/** Runs this file under Bun or Deno, passing on the signals a supervisor sends, and exits as it exits. */
function runUnder(runtime: Exclude<RuntimeName, 'node'>): void {
  const root = fileURLToPath(new URL('../', import.meta.url));
  const binary = `${root}node_modules/.bin/${runtime}`;
  const script = fileURLToPath(import.meta.url);
  // Deno: every permission a Node process has; sloppy imports map the sources' `.js` specifiers to
  // their `.ts` files, and the import map resolves `courier-platform/*` to the sources, as tsconfig's paths do.
  const args = runtime === 'bun' ? [script] : ['run', '--allow-all', '--sloppy-imports', `--import-map=${root}examples/deno-imports.json`, script];
  const child = spawn(binary, args, { cwd: root, stdio: 'inherit', env: { ...process.env, DENO_NO_UPDATE_CHECK: '1' } });
  child.once('error', (error) => exit(`cannot run ${runtime} (${binary}): ${reason(error)}`));
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
  child.once('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

async function start(framework: Framework): Promise<void> {
  let config: ExampleConfig;
  try {
    config = readConfig();
  } catch (error) {
    exit(reason(error));
  }
  const site = await createSite(config).catch((error: unknown) => exit(`cannot start: ${reason(error)}`));
  let host: ExampleHost;
  try {
    host = await createHost(framework, site);
    await host.ready();
  } catch (error) {
    // A configuration the platform refuses, or a store out of reach: nothing started may keep the process alive.
    await site.close();
    exit(`cannot start: ${reason(error)}${storeLocation(config)}`);
  }
  let listening: Listening;
  try {
    listening = await host.listen(config.port, config.host);
  } catch (error) {
    await site.close();
    exit(listenFailure(error as NodeJS.ErrnoException, config));
  }
  const base = config.publicUrl;
  console.log(`courier-platform example listening on http://${config.host}:${listening.port} (public URL ${base})`);
  console.log(`  host:            ${FRAMEWORKS[framework]} on ${runtimeLabel()}`);
  console.log(`  sign in:         ${base}/rp/start   (demo / demo; builds the authorization URL with state, nonce and PKCE)`);
  // Only the well-known demo secret is printed; a secret from the environment stays out of the console.
  const secret = config.demoClientSecret === 'demo-secret' ? 'demo-secret' : '(DEMO_CLIENT_SECRET)';
  console.log(`  authorize:       ${base}/oauth/authorize   client ${config.demoClientId} / ${secret}, redirect ${config.demoRedirectUri}`);
  console.log(`  discovery:       ${base}/oauth/.well-known/openid-configuration`);
  console.log(`  courier proxy:   ${base}/courier/<operation>   e.g. curl ${base}/courier/get_address`);
  console.log(`  openapi:         ${base}/openapi/v1/ping (Bearer, quota ${config.quota.minute}/min ${config.quota.day}/day ${config.quota.month || 'unlimited'}/month)`);
  console.log(`                   ${base}/openapi/v1/get_quota?api_path=/openapi/v1/ping`);
  console.log(`  upstream:        ${site.upstreamUrl}${site.usesSandbox ? '   (bundled sandbox)' : ''}`);
  console.log(`  store:           ${config.store}`);
  if (config.adminToken) console.log(`  console:         ${base}/admin/console   (operator console; sign in with ADMIN_TOKEN)`);

  const shutdown = async () => {
    await stopExample(listening, host, site);
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

let choice: ReturnType<typeof readHostChoice>;
try {
  choice = readHostChoice();
} catch (error) {
  exit(reason(error));
}
if (RUNTIME === 'node' && choice.runtime !== 'node') runUnder(choice.runtime);
else await start(choice.framework);
