/**
 * `courier-platform hash-secret`: the scrypt hash of a client secret, for `secretHash` in the
 * options (docs/operator.md). The secret comes from stdin, never from an argument, so it stays out
 * of the shell's history and the process list.
 */
import { hashClientSecret } from '../oauth/client-secret.js';
import { parseFlags } from './args.js';
import { CliError, reasonOf } from './errors.js';

const HASH_SECRET_HELP = `Usage: courier-platform hash-secret

Reads a client secret (UTF-8, at most 4096 characters) from stdin (or asks for it, without echo, on
a terminal) and prints its scrypt hash for the \`secretHash\` of a client. The hash contains $
signs: single-quote it in a shell, and in a .env file read with dotenv-expand.

  echo -n 'the secret' | npx courier-platform hash-secret
`;

/**
 * Longer input is not a secret someone typed or generated but a file or a stream piped by mistake.
 * Counted in characters (Unicode code points), as docs/operator.md says, not in UTF-16 units.
 */
const MAX_SECRET_LENGTH = 4096;
/** UTF-8 takes at most 4 bytes a code point; 2 more for the `\r\n` an `echo` may add. */
const MAX_PIPED_BYTES = MAX_SECRET_LENGTH * 4 + 2;

const tooLong = () => new CliError(`hash-secret: the input is longer than ${MAX_SECRET_LENGTH} characters; pipe in the secret alone`, 2);

async function readPiped(stdin: NodeJS.ReadStream): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stdin) {
    chunks.push(chunk as Buffer);
    bytes += (chunk as Buffer).length;
    // Stops reading at once, so `cat /dev/urandom | … hash-secret` ends instead of filling memory.
    if (bytes > MAX_PIPED_BYTES) {
      stdin.destroy();
      throw tooLong();
    }
  }
  let text: string;
  try {
    // Fatal: a byte that is not UTF-8 would otherwise become U+FFFD, and the hash would be that of
    // another secret than the one in the file. A UTF-8 byte order mark (Notepad's) is not part of it.
    text = new TextDecoder('utf-8', { fatal: true }).decode(Buffer.concat(chunks, bytes));
  } catch {
    throw new CliError('hash-secret: the input is not UTF-8 text; convert the secret to UTF-8 (e.g. with iconv) and pipe it in again', 2);
  }
  // `echo` adds a newline; a secret that ends in one is not worth the surprise.
  const secret = text.replace(/\r?\n$/, '');
  if (codePoints(secret) > MAX_SECRET_LENGTH) throw tooLong();
  return secret;
}

function codePoints(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}

function promptHidden(stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream): Promise<string> {
  stderr.write('Client secret: ');
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  let value = '';
  return new Promise((resolve, reject) => {
    const finish = () => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') {
          finish();
          resolve(value);
          return;
        }
        if (char === '\u0003' || char === '\u0004') {
          finish();
          reject(new CliError('hash-secret: cancelled', 1));
          return;
        }
        value = char === '\u007f' || char === '\b' ? value.slice(0, -1) : value + char;
      }
    };
    stdin.on('data', onData);
  });
}

export async function hashSecretCommand(args: readonly string[], io: { stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream; stdin: NodeJS.ReadStream }): Promise<void> {
  const { values } = parseFlags('hash-secret', args, {});
  if (values.help) {
    io.stdout.write(HASH_SECRET_HELP);
    return;
  }
  const secret = io.stdin.isTTY ? await promptHidden(io.stdin, io.stderr) : await readPiped(io.stdin);
  if (secret === '') throw new CliError('hash-secret: the secret is empty (pipe it in, or type it at the prompt)', 2);
  let hash: string;
  try {
    hash = await hashClientSecret(secret);
  } catch (error) {
    // The library's own rule on secrets (length, type), said the command line's way.
    throw new CliError(`hash-secret: ${reasonOf(error).replace(/^.*?secret:\s*/, '')}`, 2);
  }
  io.stdout.write(`${hash}\n`);
}
