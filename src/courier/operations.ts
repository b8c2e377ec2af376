/**
 * The 13 upstream operations. The upstream `api` name, the proxy path segment and the
 * schema key are the same string, so one list drives routing, validation and forwarding.
 */
export const COURIER_OPERATION_NAMES = [
  'get_address',
  'get_express_type',
  'get_express_tags',
  'get_balance',
  'get_coupon',
  'billing_fee',
  'create_order',
  'create_agent_order',
  'cancel_order',
  'query_order_logs',
  'query_account_details',
  'create_pre_order',
  'query_pre_order_status',
] as const;

export type CourierOperationName = (typeof COURIER_OPERATION_NAMES)[number];

/** What every upstream call answers, and what every transport must return. */
export interface UpstreamEnvelope {
  code: number;
  message: string;
  data: unknown;
}

/** Fields the proxy adds itself; a caller sending any of them gets a 400. */
export const RESERVED_FIELDS = ['api', 'appId', 'version', 'sign'] as const;
