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
a terminal) and prints its scrypt hash for the \`secretHash\` of a client. At the prompt, Backspace
removes the last character; a line with any other control key (arrows, Tab, Esc) is refused at
Enter. The hash contains $ signs: single-quote it in a shell, and in a .env file read with
dotenv-expand.

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

/** C0 controls, DEL and C1 controls: keys, not characters of a secret (Unicode category Cc). */
const CONTROL = /\p{Cc}/u;

const CONTROL_KEY = 'a control key (an arrow, Tab, Esc, …) was pressed at the prompt, which takes characters and Backspace only; nothing was hashed: type the secret again';

const NOT_UTF8_TERMINAL = 'the terminal sent a character that is not UTF-8; nothing was hashed: set the terminal to UTF-8, or pipe the secret in';

/**
 * Reads the secret keystroke by keystroke in raw mode, without echo. Backspace removes one code
 * point, as the terminal's own line editing does for UTF-8 (termios IUTF8), so `😀` then Backspace
 * leaves nothing of the emoji. Any other control key (an arrow's `ESC [ D`, Tab, Ctrl-U) is
 * refused rather than taken into the secret or interpreted: the user cannot see what the line
 * holds, so the only safe answer is to let them type it again. A refusal waits for Enter, reading
 * on without echo and keeping nothing: stopping at once would give the rest of what the user types
 * or pastes to the shell, echoed on screen and run (and kept in its history) at Enter.
 * Ctrl-C and Ctrl-D, asked for by the user, stop at once.
 */
function promptHidden(stdin: NodeJS.ReadStream, stderr: NodeJS.WriteStream): Promise<string> {
  // Echo off before the prompt shows: a key typed as soon as it appears must not be echoed.
  stdin.setRawMode(true);
  stderr.write('Client secret: ');
  stdin.setEncoding('utf8');
  stdin.resume();
  // One entry a code point (a string iterates by code point; the utf8 decoder never splits one).
  let typed: string[] = [];
  /** Why the line is refused, once it is: the rest of it, up to Enter, is read and dropped. */
  let refusal: string | undefined;
  return new Promise((resolve, reject) => {
    const finish = () => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('error', onEnd);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
    };
    // The message never repeats what was typed: it is (part of) the secret.
    const fail = (message: string, exitCode: 1 | 2) => {
      finish();
      reject(new CliError(`hash-secret: ${message}`, exitCode));
    };
    const refuse = (message: string) => {
      refusal = message;
      typed = [];
    };
    const onEnd = () => fail('cancelled', 1);
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n') {
          if (refusal !== undefined) return fail(refusal, 2);
          finish();
          resolve(typed.join(''));
          return;
        }
        if (char === '\u0003' || char === '\u0004') return fail('cancelled', 1);
        if (refusal !== undefined) continue;
        if (char === '\u007f' || char === '\b') typed.pop();
        else if (CONTROL.test(char)) refuse(CONTROL_KEY);
        // The utf8 decoder's mark for bytes that are not UTF-8 (a Latin-1 terminal's é): hashing it would hash another secret.
        else if (char === '\uFFFD') refuse(NOT_UTF8_TERMINAL);
        else if (typed.length === MAX_SECRET_LENGTH) refuse(`the secret typed is longer than ${MAX_SECRET_LENGTH} characters`);
        else typed.push(char);
      }
    };
    stdin.on('data', onData);
    stdin.once('end', onEnd);
    stdin.once('error', onEnd);
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
