#!/usr/bin/env node
/**
 * The package's command line, `npx courier-platform <command>` (docs/operator.md): exit 0 when
 * done, 1 when a command failed, 2 when it was used wrongly.
 */
import { hashSecretCommand } from './hash-secret.js';
import { CliError } from './errors.js';
import { migrateCommand } from './migrate.js';
import { sandboxCommand } from './sandbox.js';
import { packageVersion } from './version.js';

const HELP = `Usage: courier-platform <command> [options]

Commands:
  hash-secret   print the hash of a client secret read from stdin
  migrate       create the PostgreSQL tables of the OAuth and quota stores (or --print their SQL)
  sandbox       start the bundled courier sandbox on a port

Run \`courier-platform <command> --help\` for a command's options, \`courier-platform --version\` for the version.
`;

async function main(argv: readonly string[]): Promise<void> {
  const [command, ...args] = argv;
  const io = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr, env: process.env };
  switch (command) {
    case 'hash-secret':
      return hashSecretCommand(args, io);
    case 'migrate':
      return migrateCommand(args, io);
    case 'sandbox': {
      const close = await sandboxCommand(args, io);
      if (!close) return;
      const stop = () => void close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      return;
    }
    case '--version':
    case '-v': {
      const version = packageVersion(process.argv[1]!);
      if (version === undefined) throw new CliError('cannot find the package.json of courier-platform beside this command');
      process.stdout.write(`${version}\n`);
      return;
    }
    case '--help':
    case '-h':
    case 'help':
      process.stdout.write(HELP);
      return;
    case undefined:
      process.stderr.write(HELP);
      throw new CliError('', 2);
    default:
      throw new CliError(`unknown command ${JSON.stringify(command)}; the commands are hash-secret, migrate and sandbox (see --help)`, 2);
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof CliError) {
    if (error.message) process.stderr.write(`courier-platform: ${error.message}\n`);
    process.exitCode = error.exitCode;
    return;
  }
  process.stderr.write(`courier-platform: unexpected failure: ${(error as Error)?.message ?? String(error)}\n`);
  process.exitCode = 1;
});
