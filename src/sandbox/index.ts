/**
 * `courier-platform/sandbox`: an in-memory upstream courier platform that checks signatures
 * like the real one and answers the 13 operations with data of the shapes docs/courier.md describes.
 *
 * @example
 * import { startSandbox } from 'courier-platform/sandbox';
 * const upstream = await startSandbox();   // random port on 127.0.0.1
 * // Point the courier proxy's upstream URL at upstream.url, with app id 'sandbox-app' and
 * // app secret 'sandbox-secret' (SANDBOX_DEFAULT_APP_ID / SANDBOX_DEFAULT_APP_SECRET).
 * await upstream.close();
 */
export { createSandbox, startSandbox, SANDBOX_DEFAULT_APP_ID, SANDBOX_DEFAULT_APP_SECRET } from './sandbox.js';
export { SandboxCode, SandboxError } from './codes.js';
export { SANDBOX_BODY_LIMIT_BYTES } from './server.js';
export { SANDBOX_COMPANY_ID } from './operations.js';
export type {
  RunningSandbox,
  Sandbox,
  SandboxListenOptions,
  SandboxOptions,
  StartSandboxOptions,
  StartedSandbox,
} from './types.js';
export type { AccountDetails, CancelledOrder, CreatedAgentOrder, CreatedOrder, PreOrderStatus } from './operations.js';
export type { PreOrderStatusId } from './store.js';
export type { BillRow, OrderLog, SandboxBalance } from './types.js';
export type { Coupon } from './coupons.js';
export type { FeeEstimate, Surcharge } from './fees.js';
export type { ExpressTag, ExpressType, Floor, Mansion } from './dictionary.js';
