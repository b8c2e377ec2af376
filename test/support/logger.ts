import { pino } from 'pino';
import type { Logger } from '../../src/core/logger.js';

export interface LogRecord {
  level: keyof Logger;
  message: string;
  /** The whole line pino wrote: message, fields, serialized errors. */
  line: string;
}

/**
 * A real pino logger writing to memory, for asserting what reached the log: `text()` is the log
 * output exactly as a host running pino would store it.
 */
export function capturingLogger(): Logger & { records: LogRecord[]; text(): string } {
  const records: LogRecord[] = [];
  const logger = pino(
    { level: 'debug' },
    {
      write(line: string) {
        const entry = JSON.parse(line) as { level: number; msg: string };
        records.push({ level: logger.levels.labels[entry.level] as keyof Logger, message: entry.msg, line });
      },
    },
  );
  return {
    records,
    debug: logger.debug.bind(logger),
    info: logger.info.bind(logger),
    warn: logger.warn.bind(logger),
    error: logger.error.bind(logger),
    text: () => records.map((record) => record.line).join(''),
  };
}
