/**
 * The courier proxy on Connect: `npx tsx examples/connect-server.ts`. Uses COURIER_UPSTREAM_URL,
 * or the bundled sandbox started on a free port.
 */
import { createServer } from 'node:http';
import connect from 'connect';
import { courierPlatform } from 'courier-platform/connect';
import { startSandbox } from 'courier-platform/sandbox';
import { readConfig } from './config.js';

const config = readConfig();
const sandbox = config.courierUpstreamUrl ? undefined : await startSandbox({ apps: { [config.courierAppId]: config.courierAppSecret } });

const app = connect();
app.use(
  courierPlatform({
    courier: {
      upstreamUrl: config.courierUpstreamUrl ?? sandbox!.url,
      credentials: { appId: config.courierAppId, appSecret: config.courierAppSecret },
    },
  }),
);
app.use((_req: unknown, res: import('node:http').ServerResponse) => {
  res.setHeader('content-type', 'text/plain');
  res.end('courier-platform on Connect: try GET /courier/get_address\n');
});

const server = createServer(app).listen(config.port, config.host, () => {
  console.log(`courier-platform Connect example on http://${config.host}:${config.port}/courier/get_address`);
});
// A port in use (EADDRINUSE) or an address this machine lacks: one line and exit code 1, as `npm start`.
server.once('error', (error) => {
  console.error(`courier-platform Connect example: cannot listen on ${config.host}:${config.port}: ${error.message}`);
  process.exit(1);
});
