import type { Logger } from '../../src/core/logger.js';

export interface LogRecord {
  level: keyof Logger;
  message: string;
  /** JSON.stringify of the fields as the logger received them. */
  fields: string;
}

/** A logger that keeps every call, for asserting what reached the log. */
export function capturingLogger(): Logger & { records: LogRecord[]; text(): string } {
  const records: LogRecord[] = [];
  const at =
    (level: keyof Logger) =>
    (message: string, fields?: Record<string, unknown>): void => {
      records.push({ level, message, fields: JSON.stringify(fields) ?? '' });
    };
  return {
    records,
    debug: at('debug'),
    info: at('info'),
    warn: at('warn'),
    error: at('error'),
    text: () => records.map((record) => `${record.level} ${record.message} ${record.fields}`).join('\n'),
  };
}
