/** `courier-platform sandbox`: the bundled courier platform on a port (docs/sandbox.md). */
import { SANDBOX_DEFAULT_APP_ID, SANDBOX_DEFAULT_APP_SECRET, startSandbox } from '../sandbox/sandbox.js';
import { parseFlags } from './args.js';
import { CliError, reasonOf } from './errors.js';

const SANDBOX_HELP = `Usage: courier-platform sandbox [--port <n>] [--host <address>]

Starts the bundled sandbox of the courier open platform, for \`courier.upstreamUrl\` in
development and tests. Stops on Ctrl-C.

  --port <n>          default 4000; 0 picks a free port
  --host <address>    default 127.0.0.1
`;

export async function sandboxCommand(args: readonly string[], io: { stdout: NodeJS.WriteStream }): Promise<(() => Promise<void>) | undefined> {
  const { values } = parseFlags('sandbox', args, { port: { type: 'string' }, host: { type: 'string' } });
  if (values.help) {
    io.stdout.write(SANDBOX_HELP);
    return undefined;
  }
  const portText = (values.port as string | undefined) ?? '4000';
  const port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
  if (!(port >= 0 && port <= 65535)) throw new CliError(`sandbox: --port must be a number 0..65535, got ${JSON.stringify(portText)}`, 2);
  const host = (values.host as string | undefined) ?? '127.0.0.1';
  let running: Awaited<ReturnType<typeof startSandbox>>;
  try {
    running = await startSandbox({ port, host });
  } catch (error) {
    throw new CliError(`sandbox: could not listen on ${host}:${port}: ${reasonOf(error)}`);
  }
  io.stdout.write(`sandbox: listening on ${running.url}\n  appId ${SANDBOX_DEFAULT_APP_ID}\n  appSecret ${SANDBOX_DEFAULT_APP_SECRET}\n`);
  return running.close;
}
