import type { z } from 'zod';
import { courierDocs, type CourierOperationDoc } from './docs.js';
import { COURIER_OPERATION_NAMES, type CourierOperationName } from './operations.js';
import { courierSchemas } from './schemas.js';

export interface CourierOperation {
  /** Upstream `api` name, also the last path segment under /courier. */
  name: CourierOperationName;
  method: 'GET' | 'POST';
  /** Validates the caller's business parameters (query for GET, JSON body for POST). */
  schema: z.ZodType<Record<string, unknown>>;
  /** Reads may be retried; anything that creates or changes an order must not be. */
  idempotent: boolean;
  /** What the API document says of it. */
  doc: CourierOperationDoc;
}

const GET_OPERATIONS = new Set<CourierOperationName>([
  'get_address',
  'get_express_type',
  'get_express_tags',
  'get_balance',
  'get_coupon',
]);

const WRITE_OPERATIONS = new Set<CourierOperationName>([
  'create_order',
  'create_agent_order',
  'cancel_order',
  'create_pre_order',
]);

/** The 13 operations (docs/courier.md) as rows of one table. */
export const courierCatalog: readonly CourierOperation[] = COURIER_OPERATION_NAMES.map((name) => ({
  name,
  method: GET_OPERATIONS.has(name) ? 'GET' : 'POST',
  schema: courierSchemas[name],
  idempotent: !WRITE_OPERATIONS.has(name),
  doc: courierDocs[name],
}));
