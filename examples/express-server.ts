/**
 * `npm start`: the example host of app.ts, listening on HOST:PORT once the platform is ready
 * (signing keys loaded, the demo client stored). A failure to start (a wrong setting, a store
 * that cannot be reached, a port in use) is printed as one line, and the process exits with 1.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createExampleApp } from './app.js';
import { readConfig, type ExampleConfig } from './config.js';

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

let config: ExampleConfig;
try {
  config = readConfig();
} catch (error) {
  exit(reason(error));
}

const example = await createExampleApp(config).catch((error: unknown) => exit(`cannot start: ${reason(error)}`));
try {
  await example.platform.platform.ready();
} catch (error) {
  await example.close();
  exit(`cannot start: ${reason(error)}${storeLocation(config)}`);
}

const server = createServer(example.app);
server.once('error', async (error: NodeJS.ErrnoException) => {
  await example.close();
  exit(listenFailure(error, config));
});
server.listen(config.port, config.host, () => {
  const { port } = server.address() as AddressInfo;
  const base = config.publicUrl;
  console.log(`courier-platform example listening on http://${config.host}:${port} (public URL ${base})`);
  console.log(`  sign in:         ${base}/rp/start   (demo / demo; builds the authorization URL with state, nonce and PKCE)`);
  // Only the well-known demo secret is printed; a secret from the environment stays out of the console.
  const secret = config.demoClientSecret === 'demo-secret' ? 'demo-secret' : '(DEMO_CLIENT_SECRET)';
  console.log(`  authorize:       ${base}/oauth/authorize   client ${config.demoClientId} / ${secret}, redirect ${config.demoRedirectUri}`);
  console.log(`  discovery:       ${base}/oauth/.well-known/openid-configuration`);
  console.log(`  courier proxy:   ${base}/courier/<operation>   e.g. curl ${base}/courier/get_address`);
  console.log(`  openapi:         ${base}/openapi/v1/ping (Bearer, quota ${config.quota.minute}/min ${config.quota.day}/day ${config.quota.month || 'unlimited'}/month)`);
  console.log(`                   ${base}/openapi/v1/get_quota?api_path=/openapi/v1/ping`);
  console.log(`  upstream:        ${example.upstreamUrl}${example.usesSandbox ? '   (bundled sandbox)' : ''}`);
  console.log(`  store:           ${config.store}`);
  if (config.adminToken) console.log(`  console:         ${base}/admin/console   (operator console; sign in with ADMIN_TOKEN)`);
});

function shutdown() {
  server.close();
  server.closeAllConnections();
  void example.close();
}
process.once('SIGINT', shutdown);
process.once('SIGTERM', shutdown);
