/** The host's `onEvent` hook (docs/operator.md#events), guarded: a hook that throws or rejects is logged and never breaks the request. */
import type { Logger } from './logger.js';

export function eventEmitter<E extends { type: string; at: number }>(
  hook: ((event: E) => unknown) | undefined,
  now: () => number,
  logger: Logger,
): (event: Omit<E, 'at'>) => void {
  if (!hook) return () => {};
  return (event) => {
    const fail = (error: unknown) => logger.error({ err: error, event: event.type }, 'onEvent failed');
    try {
      const result = hook({ ...event, at: now() } as E);
      if (result instanceof Promise) result.catch(fail);
    } catch (error) {
      fail(error);
    }
  };
}
