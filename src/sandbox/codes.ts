/**
 * Business codes of the sandbox upstream. Every upstream call is answered with HTTP 200 and one of
 * these in the envelope's `code`; only faults of the HTTP layer itself (malformed JSON, body too
 * large, wrong method) change the HTTP status. Messages never contain an app secret.
 *
 * | code  | meaning |
 * |-------|---------|
 * | 0     | success |
 * | 40000 | the body is not valid JSON / not a JSON object (HTTP 400 when it comes from the HTTP layer) |
 * | 40001 | invalid signature (sign missing or not matching) |
 * | 40002 | unknown appId |
 * | 40003 | unknown api |
 * | 40004 | invalid parameter (the message names the field and the rule) |
 * | 40400 | unknown sandbox control endpoint (HTTP 404) |
 * | 40401 | order not found |
 * | 40402 | pre-order not found |
 * | 40500 | method not allowed (HTTP 405) |
 * | 40901 | duplicate sellerOrderNo |
 * | 40902 | order already cancelled |
 * | 40903 | insufficient balance (freight balance or remaining credit) |
 * | 40904 | credit payment is not enabled for the app |
 * | 40905 | pre-order is not pending (already ordered or cancelled) |
 * | 41300 | body larger than 1 MiB (HTTP 413) |
 * | 50000 | internal sandbox error (e.g. a custom signer threw) |
 */
export const SandboxCode = {
  /** Success. */
  OK: 0,
  /** The body is not valid JSON, or not a JSON object. */
  MALFORMED_BODY: 40000,
  /** `sign` is missing or does not match the fields and the app secret. */
  INVALID_SIGNATURE: 40001,
  /** `appId` is missing or not one of the sandbox's apps. */
  UNKNOWN_APP: 40002,
  /** `api` is missing or not one of the 13 courier operations. */
  UNKNOWN_API: 40003,
  /** A business parameter is missing, of the wrong type, or names an id that does not exist. */
  INVALID_PARAMETER: 40004,
  /** A path under `/_sandbox/` that is not a control endpoint. */
  UNKNOWN_ENDPOINT: 40400,
  /** No order with that orderId / sellerOrderNo for this app. */
  ORDER_NOT_FOUND: 40401,
  /** No pre-order with that preorderId for this app. */
  PRE_ORDER_NOT_FOUND: 40402,
  /** Any HTTP method other than POST. */
  METHOD_NOT_ALLOWED: 40500,
  /** sellerOrderNo already used by an order or pre-order of this app. */
  DUPLICATE_SELLER_ORDER_NO: 40901,
  /** The order was cancelled before. */
  ORDER_ALREADY_CANCELLED: 40902,
  /** paymentId 12 with too little freight balance, or 11 with too little remaining credit. */
  INSUFFICIENT_BALANCE: 40903,
  /** paymentId 11 while the app has no credit (isCredit 0). */
  CREDIT_NOT_ENABLED: 40904,
  /** Confirming or cancelling a pre-order whose statusId is not 1. */
  PRE_ORDER_NOT_PENDING: 40905,
  /** Request body larger than 1 MiB. */
  BODY_TOO_LARGE: 41300,
  /** Something failed inside the sandbox (for example a custom signer threw). */
  INTERNAL_ERROR: 50000,
} as const;

/** One of the values of {@link SandboxCode}. */
export type SandboxCode = (typeof SandboxCode)[keyof typeof SandboxCode];

/**
 * A business error of the sandbox, carrying its {@link SandboxCode}. `handle()` turns it into an
 * envelope; `confirmPreOrder` / `cancelPreOrder` throw it.
 *
 * @example
 * try { sandbox.confirmPreOrder('sandbox-app', 'PO-nope'); }
 * catch (error) { if (error instanceof SandboxError) console.log(error.code); } // 40402
 */
export class SandboxError extends Error {
  readonly code: SandboxCode;

  constructor(code: SandboxCode, message: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** Renders a caller-supplied value for an error message, shortened so messages stay readable. */
export function show(value: unknown): string {
  let text: string;
  try {
    text = value === undefined ? 'undefined' : (JSON.stringify(value) ?? String(value));
  } catch {
    text = String(value);
  }
  return text.length > 64 ? `${text.slice(0, 61)}...` : text;
}
