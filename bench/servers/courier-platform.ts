/** courier-platform on Express: validates, signs and forwards to the sandbox. */
import { createServer } from 'node:http';
import express from 'express';
import { courierPlatform } from '../../adapters/express.js';
import type { Logger } from '../../src/index.js';
import { announceReady, listenLocal, requireEnv, stopServer } from '../lib/child.js';

// Silent except for the first few warnings and errors: a failure must be visible, but printing
// one line per failed request under load would measure the console.
let reported = 0;
const report = (fields: unknown, message: string) => {
  if (++reported <= 5) console.error(`[courier-platform] ${message}`, fields);
};
const logger: Logger = { debug() {}, info() {}, warn: report, error: report };

const app = express();
app.use(
  courierPlatform({
    courier: {
      upstreamUrl: requireEnv('SANDBOX_URL'),
      credentials: { appId: requireEnv('BENCH_APP_ID'), appSecret: requireEnv('BENCH_APP_SECRET') },
    },
    // Only the courier call is measured here; OAuth would also generate a key and warn at startup.
    oauth: false,
    logger,
  }),
);

const server = createServer(app);
announceReady(await listenLocal(server), () => stopServer(server));
