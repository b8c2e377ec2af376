import { configurationError } from '../src/core/errors.js';
import type { GuardedRouteDoc } from '../src/guard/guarded-doc.js';
import type { Platform } from '../src/platform.js';

/**
 * `platform.quota()` exists only when the quota part is on; say so when the host builds its routes.
 * A `doc` lists the route in the API document.
 */
export function requireGuard(platform: Platform, apiPath?: string, doc?: GuardedRouteDoc): NonNullable<Platform['guard']> {
  if (!platform.guard) throw configurationError('invalid_option', 'quota', 'quota() needs the quota part, which is switched off (quota: false)');
  if (doc) platform.describeGuarded?.(apiPath, doc);
  return platform.guard;
}
