/**
 * The platform logs through an injectable logger. Every call passes through `redact` first, so a
 * secret handed to the logger by mistake is masked in one place rather than trusted to every caller.
 */

export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const SECRET_KEY = /secret|password|passwd|authorization|cookie|token|^sign$|signature|credential|^code$|verifier|private/i;
const REDACTED = '[redacted]';

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  if (value instanceof Error) return { name: value.name, message: value.message };
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    out[key] = SECRET_KEY.test(key) ? REDACTED : redact(item, depth + 1);
  }
  return out;
}

/** Logs warnings and errors to the console; quiet otherwise. */
export const consoleLogger: Logger = {
  debug() {},
  info() {},
  warn: (message, fields) => console.warn(`[courier-platform] ${message}`, fields ?? ''),
  error: (message, fields) => console.error(`[courier-platform] ${message}`, fields ?? ''),
};

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };

export function safeLogger(logger: Logger): Logger {
  const wrap = (level: keyof Logger) => (message: string, fields?: LogFields) => {
    logger[level](message, fields === undefined ? undefined : (redact(fields) as LogFields));
  };
  return { debug: wrap('debug'), info: wrap('info'), warn: wrap('warn'), error: wrap('error') };
}
