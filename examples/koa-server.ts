/**
 * The courier proxy on Koa: `npx tsx examples/koa-server.ts`. Uses COURIER_UPSTREAM_URL, or the
 * bundled sandbox started on a free port.
 */
import Koa from 'koa';
import { courierPlatform } from 'courier-platform/koa';
import { startSandbox } from 'courier-platform/sandbox';
import { readConfig } from './config.js';

const config = readConfig();
const sandbox = config.courierUpstreamUrl ? undefined : await startSandbox({ apps: { [config.courierAppId]: config.courierAppSecret } });

const app = new Koa();
app.use(
  courierPlatform({
    courier: {
      upstreamUrl: config.courierUpstreamUrl ?? sandbox!.url,
      credentials: { appId: config.courierAppId, appSecret: config.courierAppSecret },
    },
  }),
);
app.use((ctx) => {
  ctx.body = 'courier-platform on Koa: try GET /courier/get_address\n';
});

const server = app.listen(config.port, config.host, () => {
  console.log(`courier-platform Koa example on http://${config.host}:${config.port}/courier/get_address`);
});
// A port in use (EADDRINUSE) or an address this machine lacks: one line and exit code 1, as `npm start`.
server.once('error', (error) => {
  console.error(`courier-platform Koa example: cannot listen on ${config.host}:${config.port}: ${error.message}`);
  process.exit(1);
});
