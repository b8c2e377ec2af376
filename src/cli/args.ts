import { parseArgs, type ParseArgsConfig } from 'node:util';
import { CliError } from './errors.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/** node:util's parseArgs, with its errors (unknown flag, missing value) turned into usage errors. */
export function parseFlags(command: string, args: readonly string[], options: Options): { values: Record<string, string | boolean | (string | boolean)[] | undefined> } {
  try {
    return parseArgs({ args: [...args], options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: false, strict: true });
  } catch (error) {
    throw new CliError(`${command}: ${(error as Error).message.split('\n')[0]} (see --help)`, 2);
  }
}
