/**
 * `courier-platform hash-secret` at a terminal prompt (docs/operator.md, Command line), driven
 * through hashSecretCommand with a fake terminal: a stream that says it is a TTY and records its
 * raw mode. The piped input is tested on the packed bin, in test/packaging/cli.test.ts.
 */
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { hashSecretCommand } from '../../src/cli/hash-secret.js';
import { CliError } from '../../src/cli/errors.js';
import { verifyClientSecret } from '../../src/oauth/client-secret.js';

function fakeTerminal() {
  const rawMode: boolean[] = [];
  /** Raw mode switches and what stderr showed, in the order they happened. */
  const events: string[] = [];
  const stdin = Object.assign(new PassThrough(), {
    isTTY: true,
    setRawMode(mode: boolean) {
      rawMode.push(mode);
      events.push(`raw ${mode}`);
      return stdin;
    },
  });
  const written = { stdout: '', stderr: '' };
  const sink = (name: keyof typeof written) => ({
    write: (text: string) => {
      written[name] += text;
      if (name === 'stderr') events.push(text);
      return true;
    },
  });
  const io = { stdin: stdin as unknown as NodeJS.ReadStream, stdout: sink('stdout') as unknown as NodeJS.WriteStream, stderr: sink('stderr') as unknown as NodeJS.WriteStream };
  return { stdin, io, rawMode, events, written };
}

/** What the command's promise holds one turn of the event loop after the keys were read. */
function settledYet<T>(done: Promise<T>): Promise<T | 'still waiting'> {
  return Promise.race([done, new Promise<'still waiting'>((resolve) => setImmediate(() => resolve('still waiting')))]);
}

/**
 * Runs the command with the keystrokes given (each one chunk, as a terminal delivers them), then
 * those given as `afterwards` once the command was seen still waiting for them.
 */
async function typeAtPrompt(keystrokes: (string | Buffer)[], afterwards: string[] = []) {
  const terminal = fakeTerminal();
  const done = hashSecretCommand([], terminal.io).then(
    () => undefined,
    (error: unknown) => error as CliError,
  );
  for (const keys of keystrokes) terminal.stdin.write(keys);
  let waited: { stderr: string; rawMode: boolean[] } | undefined;
  if (afterwards.length > 0) {
    expect(await settledYet(done)).toBe('still waiting');
    waited = { stderr: terminal.written.stderr, rawMode: [...terminal.rawMode] };
    for (const keys of afterwards) terminal.stdin.write(keys);
  }
  const error = await done;
  return { error, waited, hash: terminal.written.stdout.trim(), stderr: terminal.written.stderr, rawMode: terminal.rawMode, events: terminal.events };
}

describe('hash-secret at a terminal prompt', () => {
  it('turns echo off before the prompt shows, so a key typed the moment it appears is not echoed', async () => {
    const typed = await typeAtPrompt(['abcdefgh\r']);
    expect(typed.error).toBeUndefined();
    expect(typed.events).toEqual(['raw true', 'Client secret: ', 'raw false', '\n']);
  });

  it('Backspace removes one code point: an emoji typed then erased leaves nothing behind', async () => {
    const typed = await typeAtPrompt(['abcd😀', '\u007f', 'efgh', '\r']);
    expect(typed.error).toBeUndefined();
    expect(await verifyClientSecret('abcdefgh', typed.hash)).toBe(true);
    expect(await verifyClientSecret('abcd\uD83Defgh', typed.hash)).toBe(false);
    expect([typed.stderr, typed.rawMode]).toEqual(['Client secret: \n', [true, false]]);

    // An emoji whose UTF-8 bytes arrive in two reads, erased with Ctrl-H.
    const emoji = Buffer.from('😀');
    const split = await typeAtPrompt(['secret-', emoji.subarray(0, 2), emoji.subarray(2), '\b', 'x\r']);
    expect(await verifyClientSecret('secret-x', split.hash)).toBe(true);
  });

  it.each([
    ['an arrow key', '\u001b[D'],
    ['Esc', '\u001b'],
    ['Tab', '\t'],
    ['Ctrl-U', '\u0015'],
    ['a C1 control', '\u0085'],
  ])('refuses %s with exit 2 at Enter, swallowing the rest of the line, in one line that never repeats the input', async (_name, key) => {
    const typed = await typeAtPrompt(['typed-never-printed', key, 'more-never-printed'], ['\u007f', 'and more\r']);
    // Until Enter the terminal stays without echo and the keys go nowhere (not to the shell).
    expect(typed.waited).toEqual({ stderr: 'Client secret: ', rawMode: [true] });
    expect(typed.error).toBeInstanceOf(CliError);
    expect(typed.error!.exitCode).toBe(2);
    expect(typed.error!.message).toBe('hash-secret: a control key (an arrow, Tab, Esc, …) was pressed at the prompt, which takes characters and Backspace only; nothing was hashed: type the secret again');
    expect([typed.hash, typed.stderr, typed.rawMode]).toEqual(['', 'Client secret: \n', [true, false]]);
  });

  it('refuses at Enter a key whose bytes are not UTF-8 (a Latin-1 terminal), rather than hash a replacement character', async () => {
    const typed = await typeAtPrompt(['hunter2long', Buffer.from([0xe9])], ['\r']);
    expect(typed.error).toBeInstanceOf(CliError);
    expect([typed.error!.exitCode, typed.error!.message]).toEqual([2, 'hash-secret: the terminal sent a character that is not UTF-8; nothing was hashed: set the terminal to UTF-8, or pipe the secret in']);
    expect([typed.hash, typed.rawMode]).toEqual(['', [true, false]]);
  });

  it('takes at most 4096 characters, counted in code points; a longer line is refused at Enter', async () => {
    const emoji = await typeAtPrompt(['😀'.repeat(4096), '\r']);
    expect(emoji.error).toBeUndefined();
    expect(await verifyClientSecret('😀'.repeat(4096), emoji.hash)).toBe(true);

    // Backspace does not bring a refused line back under the limit.
    const pasted = await typeAtPrompt(['s'.repeat(20_000), '\u007f'.repeat(16_000)], ['\r']);
    expect(pasted.waited).toEqual({ stderr: 'Client secret: ', rawMode: [true] });
    expect(pasted.error).toBeInstanceOf(CliError);
    expect([pasted.error!.exitCode, pasted.error!.message]).toEqual([2, 'hash-secret: the secret typed is longer than 4096 characters']);
    expect([pasted.hash, pasted.stderr, pasted.rawMode]).toEqual(['', 'Client secret: \n', [true, false]]);
  });

  it('Ctrl-C and Ctrl-D cancel with exit 1', async () => {
    for (const key of ['\u0003', '\u0004']) {
      const typed = await typeAtPrompt(['abcdefgh', key]);
      expect([typed.error?.exitCode, typed.error?.message, typed.hash, typed.rawMode]).toEqual([1, 'hash-secret: cancelled', '', [true, false]]);
    }
  });

  it('a terminal that closes before Enter cancels with exit 1 instead of leaving the command waiting', async () => {
    const terminal = fakeTerminal();
    const done = hashSecretCommand([], terminal.io).catch((error: unknown) => error as CliError);
    const ended = once(terminal.stdin, 'end');
    terminal.stdin.end('abcdefgh');
    await ended;
    // Settled by the time the stream has ended: one turn of the event loop later at most.
    const error = await settledYet(done);
    expect(error).toBeInstanceOf(CliError);
    expect([(error as CliError).exitCode, (error as CliError).message, terminal.written.stdout, terminal.rawMode]).toEqual([1, 'hash-secret: cancelled', '', [true, false]]);
  });
});
