import { configurationError } from '../src/core/errors.js';
import type { Platform } from '../src/platform.js';

/** `platform.quota()` exists only when the quota part is on; say so when the host builds its routes. */
export function requireGuard(platform: Platform): NonNullable<Platform['guard']> {
  if (!platform.guard) throw configurationError('invalid_option', 'quota', 'quota() needs the quota part, which is switched off (quota: false)');
  return platform.guard;
}
