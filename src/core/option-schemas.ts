/**
 * Building blocks of the option schemas every part shares, so a function, a path or a logger is
 * checked (and described) the same way wherever it appears.
 */
import { z } from 'zod';
import type { Logger } from './logger.js';

export const functionOption = <T>(what = 'a function') => z.custom<T>((value) => typeof value === 'function', { message: `must be ${what}` });

export const nonEmptyText = z.string().min(1);

export const positiveInteger = z.number().int().positive();

export const countOption = z.number().int().min(0);

/** Where a part answers, relative to the mount point: `/oauth`, `/api/courier`. */
export const basePathOption = z.string().regex(/^\/[A-Za-z0-9/_.-]*[^/]$/, 'must be a path that starts with / and does not end with /');

export const httpUrlOption = z.url({ protocol: /^https?$/, error: 'must be an absolute http(s) URL' });

/** An object with these methods (a store, a rule source): checked by shape, so any implementation fits. */
export function objectWith<T>(methods: readonly string[], what: string) {
  return z.custom<T>(
    (value) => typeof value === 'object' && value !== null && methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function'),
    { message: `must be ${what} (with ${methods.map((m) => `${m}()`).join(', ')})` },
  );
}

export const loggerOption = objectWith<Logger>(['debug', 'info', 'warn', 'error'], 'a logger');
