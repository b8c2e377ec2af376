/** The upstream: the package's sandbox courier platform, alone in its process. */
import { startSandbox } from '../../src/sandbox/index.js';
import { announceReady, requireEnv } from '../lib/child.js';

const sandbox = await startSandbox({
  apps: { [requireEnv('BENCH_APP_ID')]: requireEnv('BENCH_APP_SECRET') },
  host: '127.0.0.1',
  port: 0,
});
announceReady(sandbox.url, () => sandbox.close());
