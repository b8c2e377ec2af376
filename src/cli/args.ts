import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * node:util's parseArgs, with its errors (unknown flag, missing value) turned into usage errors.
 * An argument that is no option is not repeated: it is most often what an option's value should
 * have been (`migrate postgres://user:password@…`, a secret typed after `hash-secret`), and the
 * error line ends up in terminals and CI logs.
 */
export function parseFlags(command: string, args: readonly string[], options: Options): { values: Record<string, string | boolean | (string | boolean)[] | undefined> } {
  try {
    return parseArgs({ args: [...args], options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: false, strict: true });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL') {
      throw new CliError(`${command}: takes options only, and was given an argument that is none (not repeated here, in case it is a secret) (see --help)`, 2);
    }
    throw new CliError(`${command}: ${(error as Error).message.split('\n')[0]} (see --help)`, 2);
  }
}
