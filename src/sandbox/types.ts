import type { SignerOption } from '../courier/signing.js';
import type { UpstreamEnvelope } from '../courier/operations.js';

/**
 * Options of {@link createSandbox}. Every field is optional.
 *
 * @example
 * const sandbox = createSandbox({
 *   apps: { 'sandbox-app': 'sandbox-secret', 'other-app': 'other-secret' },
 *   signer: 'hmac-sha256',
 *   autoConfirmPreOrdersAfterMs: 5_000,
 * });
 */
export interface SandboxOptions {
  /** appId -> appSecret accepted by the sandbox. Default `{ 'sandbox-app': 'sandbox-secret' }`. */
  apps?: Record<string, string>;
  /** Must match the proxy's signer. Default `'md5'`. */
  signer?: SignerOption;
  /** Injectable clock; default `() => new Date()`. Read once per call. */
  now?: () => Date;
  /**
   * When set, a pending pre-order is confirmed (status 1 -> 2, gets an orderId) on the first
   * `query_pre_order_status` at least this many ms after it was created. Default: never
   * (confirm explicitly with `confirmPreOrder` or `POST /_sandbox/pre_orders/confirm`).
   */
  autoConfirmPreOrdersAfterMs?: number;
  /**
   * Starting balance of every app (fields not given keep their default). Default: credit enabled,
   * `{ isCredit: 1, creditDays: 30, creditAmount: 5000, creditBalance: creditAmount,
   * onlineBalance: 1000, proxyBalance: 0 }`.
   */
  initialBalance?: Partial<SandboxBalance>;
  /**
   * Memory bound for long runs (benchmarks): when an app holds more orders (or pre-orders) than
   * this, the oldest tenth of them is forgotten with their logs and bill rows. Default 50000
   * (roughly 40 MB of orders per app).
   */
  maxOrdersPerApp?: number;
}

/** Where {@link Sandbox.listen} listens. */
export interface SandboxListenOptions {
  /** 0 (default) picks a random free port. */
  port?: number;
  /** Default `'127.0.0.1'`. */
  host?: string;
}

/** A sandbox HTTP server that is listening. */
export interface RunningSandbox {
  /** Base URL, e.g. `http://127.0.0.1:53121`; POST upstream calls to it (any path but `/_sandbox/...`). */
  readonly url: string;
  readonly port: number;
  /** Stops listening and closes every connection, idle keep-alive ones included. Idempotent. */
  close(): Promise<void>;
}

/** An in-memory upstream courier platform. */
export interface Sandbox {
  /**
   * Answers one upstream call (the parsed JSON body `{ ...params, api, appId, version, sign }`).
   * Never throws: every failure is an envelope with a non-zero {@link SandboxCode}.
   */
  handle(body: unknown): UpstreamEnvelope;
  /**
   * Confirms a pending pre-order: status 2 with a new order (paid like paymentId 1), so
   * query_order_logs works with that orderId. Returns the orderId; throws a {@link SandboxError}
   * if the app or pre-order is unknown (40002 / 40402) or it is not pending (40905).
   */
  confirmPreOrder(appId: string, preorderId: string): string;
  /** Cancels a pending pre-order (status 0); throws like {@link Sandbox.confirmPreOrder}. */
  cancelPreOrder(appId: string, preorderId: string): void;
  /** Starts an HTTP server answering for this sandbox (several servers may share one sandbox). */
  listen(options?: SandboxListenOptions): Promise<RunningSandbox>;
}

/** Options of {@link startSandbox}: the sandbox's and where to listen. */
export interface StartSandboxOptions extends SandboxOptions, SandboxListenOptions {}

/** What {@link startSandbox} resolves to. */
export interface StartedSandbox extends RunningSandbox {
  readonly sandbox: Sandbox;
}

/** `query_order_logs` item. opTime is ISO 8601 UTC; opImg is '' when there is none. */
export interface OrderLog {
  readonly opId: number;
  readonly opTypeName: string;
  readonly opTime: string;
  readonly opText: string;
  readonly opImg: string;
  readonly opName: string;
  readonly opMobilePhone: string;
}

/** A `query_account_details` row. Amounts in currency units, opTime ISO 8601 UTC. */
export interface BillRow {
  readonly orderId: string;
  readonly feeTypeName: string;
  readonly titleTypeName: string;
  readonly costAmount: number;
  readonly incomeAmount: number;
  readonly opTime: string;
}

/** `get_balance` data; also the shape of `SandboxOptions.initialBalance`. */
export interface SandboxBalance {
  /** 0 = credit not enabled, 1 = enabled. */
  isCredit: 0 | 1;
  creditDays: number;
  /** Credit limit. */
  creditAmount: number;
  /** Remaining credit; paymentId 11 draws from it. */
  creditBalance: number;
  /** Freight balance; paymentId 12 draws from it. */
  onlineBalance: number;
  /** Goods-payment balance (informational). */
  proxyBalance: number;
}
