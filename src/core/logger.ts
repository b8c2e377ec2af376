/**
 * The platform logs through the host's logger, in pino's and bunyan's argument order:
 * `logger.warn(fields, message)`. A Node `Console` (`console` itself) is accepted too and writes
 * one line per event. Every call passes through `redact` first, so a secret handed to the logger
 * by mistake is masked in one place rather than trusted to every caller. An error goes under
 * `err`, where pino's and bunyan's error serializers look for it.
 */
import { Console } from 'node:console';

export type LogFields = Record<string, unknown>;

/** One level: the structured fields first, then the message. */
export type LogFn = (fields: LogFields, message: string) => void;

export interface Logger {
  debug: LogFn;
  info: LogFn;
  warn: LogFn;
  error: LogFn;
}

type Level = keyof Logger;
const LEVELS: readonly Level[] = ['debug', 'info', 'warn', 'error'];

const SECRET_KEY = /secret|password|passwd|authorization|cookie|token|^sign$|signature|credential|^code$|verifier|private/i;
/**
 * An error's own `code` says what failed (Node's `ECONNREFUSED`, a PlatformError's
 * `store_unavailable`, PostgreSQL's SQLSTATE), so it stays; `code` anywhere else may be an
 * authorization code (RFC 6749 4.1.2) and is masked.
 */
const isErrorCode = (key: string, value: unknown) => key === 'code' && (typeof value === 'string' || typeof value === 'number');
/** What stands where a secret was: in the log, and in an upstream's answer (docs/courier.md#credentials). */
export const REDACTED = '[redacted]';
// Also what stops a circular structure: nothing below this depth reaches the logger.
const MAX_DEPTH = 6;

export function redact(value: unknown, depth = 0): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (depth > MAX_DEPTH) return '[too deep]';
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (value instanceof Error) return redactedError(value, depth);
  return redactEntries(value, {}, depth);
}

function redactEntries<T extends object>(source: object, target: T, depth: number): T {
  const out = target as Record<string, unknown>;
  const error = source instanceof Error;
  for (const [key, item] of Object.entries(source)) {
    out[key] = SECRET_KEY.test(key) && !(error && isErrorCode(key, item)) ? REDACTED : redact(item, depth + 1);
  }
  return target;
}

/**
 * A copy of the error that keeps its class, message and stack, so error serializers still see an
 * Error (pino's reports its `type` from the class), while its own fields and its cause go through
 * `redact` like any other field.
 */
function redactedError(error: Error, depth: number): Error {
  const copy = redactEntries(error, Object.create(Object.getPrototypeOf(error) as object) as Error, depth);
  const hidden = { writable: true, configurable: true, enumerable: false };
  Object.defineProperties(copy, { message: { ...hidden, value: error.message }, stack: { ...hidden, value: error.stack } });
  if (error.cause !== undefined) Object.defineProperty(copy, 'cause', { ...hidden, value: redact(error.cause, depth + 1) });
  return copy;
}

/** JSON for a log line: an error as pino's serializer writes it (type, message, stack). */
function jsonValue(_key: string, value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (!(value instanceof Error)) return value;
  const cause = value.cause === undefined ? {} : { cause: value.cause };
  return { ...value, type: value.constructor.name, message: value.message, stack: value.stack, ...cause };
}

/** Writes one line per event: `[courier-platform] message {"field":…}`; JSON keeps a stack on that line. */
function consoleLines(target: Console, levels: readonly Level[]): Logger {
  const line =
    (level: Level): LogFn =>
    (fields, message) => {
      if (!levels.includes(level)) return;
      const json = Object.keys(fields).length > 0 ? ` ${JSON.stringify(fields, jsonValue)}` : '';
      target[level](`[courier-platform] ${message}${json}`);
    };
  return { debug: line('debug'), info: line('info'), warn: line('warn'), error: line('error') };
}

/** The default: warnings and errors on the console, one line each; quiet otherwise. */
export const consoleLogger: Logger = consoleLines(console, ['warn', 'error']);

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

/** The host's logger behind redaction; a Console passed as the logger gets every level, one line each. */
export function safeLogger(logger: Logger): Logger {
  const target = logger instanceof Console ? consoleLines(logger, LEVELS) : logger;
  const wrap =
    (level: Level): LogFn =>
    (fields, message) =>
      target[level](redact(fields) as LogFields, message);
  return { debug: wrap('debug'), info: wrap('info'), warn: wrap('warn'), error: wrap('error') };
}
