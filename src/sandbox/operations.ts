/**
 * The 13 upstream operations, one function each, looked up by api name. Each receives the parsed
 * body (business params plus api/appId/version/sign, which it ignores) and the app's ledger, and
 * returns the envelope's `data` or throws a {@link SandboxError}.
 */
import type { CourierOperationName } from '../courier/operations.js';
import { SandboxCode, SandboxError, show } from './codes.js';
import { findCoupon, couponsAt } from './coupons.js';
import {
  EXPRESS_TAG_MASK,
  EXPRESS_TAGS,
  EXPRESS_TYPES,
  MANSIONS,
  findExpressType,
  findMansion,
  mansionIdOfFloor,
} from './dictionary.js';
import { estimateFee, toCents, type FeeEstimate, type PricedFee } from './fees.js';
import {
  invalidParameter,
  MAX_MEMO_LENGTH,
  MAX_REFERENCE_LENGTH,
  optionalAmount,
  optionalDate,
  optionalEnum,
  optionalInt,
  optionalString,
  requiredEnum,
  requiredInt,
  requiredString,
  type Params,
} from './params.js';
import { PRE_ORDER_STATUS_NAMES, orderNotFound, type AppLedger, type Funding, type OrderRecord, type PreOrderStatusId } from './store.js';
import type { BillRow, OrderLog } from './types.js';

/** What an operation sees besides the body. */
export interface OperationContext {
  /** The calling app's state. */
  readonly ledger: AppLedger;
  /** The sandbox clock, read once per call. */
  readonly epochMs: number;
  /** SandboxOptions.autoConfirmPreOrdersAfterMs. */
  readonly autoConfirmAfterMs: number | undefined;
}

export type Operation = (params: Params, context: OperationContext) => unknown;

/** companyId of every order the sandbox creates. */
export const SANDBOX_COMPANY_ID = 10001;

/** `create_order` data. printImgUrl is '' unless returnPrintImg was 1. */
export interface CreatedOrder {
  orderId: string;
  companyId: number;
  printImgUrl: string;
}

/** `create_agent_order` data: a created order plus the payment QR-code address. */
export interface CreatedAgentOrder extends CreatedOrder {
  payInfo: string;
}

/** `cancel_order` data. */
export interface CancelledOrder {
  orderId: string;
  cancelled: true;
}

/**
 * `query_account_details` data. The sandbox does not paginate: `total` is the number
 * of rows matching the filters and `records` is `rows.length`, so the two are always equal.
 */
export interface AccountDetails {
  total: number;
  records: number;
  rows: BillRow[];
}

/** `query_pre_order_status` data; orderId only when statusId is 2. */
export interface PreOrderStatus {
  preorderId: string;
  statusId: PreOrderStatusId;
  statusName: string;
  orderId?: string;
}

const MAX_WEIGHT_KG = 10_000;
const LABEL_BASE = 'http://sandbox.invalid/labels/';
const PAY_BASE = 'http://sandbox.invalid/pay/';

function readWeight(params: Params, required: boolean): number | undefined {
  const weight = optionalAmount(params, 'goodsWeight');
  if (weight === undefined) {
    if (required) throw invalidParameter('goodsWeight', 'is required (kilograms, > 0)');
    return undefined;
  }
  if (weight <= 0 || weight > MAX_WEIGHT_KG) {
    throw invalidParameter('goodsWeight', `must be > 0 and <= ${MAX_WEIGHT_KG} kg, got ${show(params.goodsWeight)}`);
  }
  return weight;
}

function readExpressTypeId(params: Params, required: boolean): number | undefined {
  const id = required ? requiredInt(params, 'expressTypeId') : optionalInt(params, 'expressTypeId');
  if (id !== undefined && !findExpressType(id)) {
    throw invalidParameter(
      'expressTypeId',
      `${id} is not an express type (get_express_type lists ${EXPRESS_TYPES.map((t) => t.expressTypeId).join(', ')})`,
    );
  }
  return id;
}

function readTags(params: Params): number {
  const tags = optionalInt(params, 'expressTagIds') ?? 0;
  if (tags < 0 || (tags & ~EXPRESS_TAG_MASK) !== 0) {
    throw invalidParameter(
      'expressTagIds',
      `${tags} is not a combination of express tags (bitwise OR of ${EXPRESS_TAGS.map((t) => t.expressTagId).join(', ')})`,
    );
  }
  return tags;
}

/** Checks `<side>MansionId` / `<side>FloorId`: known building, floor of that building. */
function checkAddress(params: Params, side: 'customer' | 'my', required: boolean): void {
  const mansionField = `${side}MansionId`;
  const floorField = `${side}FloorId`;
  const mansionId = required ? requiredInt(params, mansionField) : optionalInt(params, mansionField);
  const floorId = required ? requiredInt(params, floorField) : optionalInt(params, floorField);
  if (mansionId !== undefined && !findMansion(mansionId)) {
    throw invalidParameter(mansionField, `${mansionId} is not a building of get_address`);
  }
  if (floorId !== undefined) {
    const owner = mansionIdOfFloor(floorId);
    if (owner === undefined) throw invalidParameter(floorField, `${floorId} is not a floor of get_address`);
    if (mansionId !== undefined && owner !== mansionId) {
      throw invalidParameter(floorField, `floor ${floorId} is not in building ${mansionId} (${mansionField})`);
    }
  }
}

function readCouponCents(params: Params, epochMs: number): number {
  const couponId = optionalInt(params, 'couponId');
  if (couponId === undefined) return 0;
  const coupon = findCoupon(couponId, epochMs);
  if (!coupon) throw invalidParameter('couponId', `${couponId} is not a valid coupon of get_coupon`);
  return toCents(coupon.couponAmount);
}

interface PricedParams extends PricedFee {
  readonly expressTypeId: number;
  readonly goodsWeight: number;
  readonly fetchTypeId: number | undefined;
  readonly sendTypeId: number | undefined;
}

/**
 * The checks shared by billing_fee and the order creators, then the fee. `strict` (orders)
 * requires the enumerations and addresses that create_order requires (docs/courier.md).
 */
function priceFromParams(params: Params, context: OperationContext, strict: boolean): PricedParams {
  const orderTypeId = strict ? requiredEnum(params, 'orderTypeId', [1, 2]) : optionalEnum(params, 'orderTypeId', [1, 2]);
  const sendTypeId = strict ? requiredEnum(params, 'sendTypeId', [21, 22]) : optionalEnum(params, 'sendTypeId', [21, 22]);
  const fetchTypeId = strict
    ? requiredEnum(params, 'fetchTypeId', [11, 12, 13])
    : optionalEnum(params, 'fetchTypeId', [11, 12, 13]);
  if (fetchTypeId === 12 && orderTypeId === 1) {
    throw invalidParameter('fetchTypeId', '12 (deliver to a store) is only for delivery orders (orderTypeId 2)');
  }
  if (fetchTypeId === 13 && orderTypeId === 2) {
    throw invalidParameter('fetchTypeId', '13 (collect on behalf) is only for pick-up orders (orderTypeId 1)');
  }
  const expressTypeId = readExpressTypeId(params, true) as number;
  const expressTagIds = readTags(params);
  checkAddress(params, 'customer', strict);
  checkAddress(params, 'my', strict);
  const goodsWeight = readWeight(params, true) as number;
  optionalAmount(params, 'goodsCollection');
  optionalAmount(params, 'goodsPayment');
  const couponCents = readCouponCents(params, context.epochMs);
  const priced = estimateFee({ expressTypeId, goodsWeight, fetchTypeId, sendTypeId, expressTagIds, couponCents });
  return { ...priced, expressTypeId, goodsWeight, fetchTypeId, sendTypeId };
}

const NORMAL_PAYMENTS: ReadonlyMap<number, { readonly name: string; readonly funding: Funding }> = new Map([
  [1, { name: 'card payment', funding: 'external' }],
  [11, { name: 'credit payment', funding: 'credit' }],
  [12, { name: 'balance payment', funding: 'balance' }],
]);

function createdText(priced: PricedParams): string {
  const typeName = findExpressType(priced.expressTypeId)?.expressTypeName ?? String(priced.expressTypeId);
  return `Order created: ${typeName}, ${priced.goodsWeight} kg, payAmount ${priced.estimate.payAmount}`;
}

function labelUrl(params: Params, orderId: string): string {
  return optionalInt(params, 'returnPrintImg') === 1 ? `${LABEL_BASE}${encodeURIComponent(orderId)}.png` : '';
}

function findOrderFor(params: Params, ledger: AppLedger): OrderRecord {
  const orderId = optionalString(params, 'orderId');
  const sellerOrderNo = optionalString(params, 'sellerOrderNo');
  if (orderId === undefined && sellerOrderNo === undefined) {
    throw invalidParameter('orderId', 'orderId or sellerOrderNo is required');
  }
  const order = orderId !== undefined ? ledger.findOrder(orderId) : ledger.findOrderBySellerOrderNo(sellerOrderNo as string);
  if (!order) {
    throw orderId !== undefined ? orderNotFound('orderId', orderId) : orderNotFound('sellerOrderNo', sellerOrderNo as string);
  }
  if (sellerOrderNo !== undefined && order.sellerOrderNo !== sellerOrderNo) {
    throw new SandboxError(
      SandboxCode.ORDER_NOT_FOUND,
      `order not found: order ${order.orderId} does not have sellerOrderNo ${show(sellerOrderNo)}`,
    );
  }
  return order;
}

/** `query_pre_order_status` data of a pre-order. */
export function preOrderStatus(preorderId: string, statusId: PreOrderStatusId, orderId: string | undefined): PreOrderStatus {
  const status: PreOrderStatus = { preorderId, statusId, statusName: PRE_ORDER_STATUS_NAMES[statusId] };
  if (statusId === 2 && orderId !== undefined) status.orderId = orderId;
  return status;
}

const getAddress: Operation = () => MANSIONS;
const getExpressType: Operation = () => EXPRESS_TYPES;
const getExpressTags: Operation = () => EXPRESS_TAGS;
const getBalance: Operation = (_params, { ledger }) => ledger.balanceView();
const getCoupon: Operation = (_params, { epochMs }) => couponsAt(epochMs);

const billingFee: Operation = (params, context): FeeEstimate => priceFromParams(params, context, false).estimate;

const createOrder: Operation = (params, context): CreatedOrder => {
  const priced = priceFromParams(params, context, true);
  const paymentId = requiredEnum(params, 'paymentId', [...NORMAL_PAYMENTS.keys()]);
  const payment = NORMAL_PAYMENTS.get(paymentId) as { name: string; funding: Funding };
  const order = context.ledger.addOrder(
    {
      sellerOrderNo: optionalString(params, 'sellerOrderNo', MAX_REFERENCE_LENGTH),
      paymentName: payment.name,
      funding: payment.funding,
      payCents: priced.payCents,
      text: createdText(priced),
    },
    context.epochMs,
  );
  return { orderId: order.orderId, companyId: SANDBOX_COMPANY_ID, printImgUrl: labelUrl(params, order.orderId) };
};

const createAgentOrder: Operation = (params, context): CreatedAgentOrder => {
  const priced = priceFromParams(params, context, true);
  const wallet = requiredEnum(params, 'paymentId', [1, 2]);
  const order = context.ledger.addOrder(
    {
      sellerOrderNo: optionalString(params, 'sellerOrderNo', MAX_REFERENCE_LENGTH),
      paymentName: `e-wallet ${wallet}`,
      funding: 'external',
      payCents: priced.payCents,
      text: createdText(priced),
    },
    context.epochMs,
  );
  return {
    orderId: order.orderId,
    companyId: SANDBOX_COMPANY_ID,
    printImgUrl: labelUrl(params, order.orderId),
    payInfo: `${PAY_BASE}${encodeURIComponent(order.orderId)}?wallet=${wallet}`,
  };
};

const cancelOrder: Operation = (params, { ledger, epochMs }): CancelledOrder => {
  const orderId = requiredString(params, 'orderId');
  ledger.cancelOrder(orderId, optionalString(params, 'cancelMemo', MAX_MEMO_LENGTH), epochMs);
  return { orderId, cancelled: true };
};

const queryOrderLogs: Operation = (params, { ledger }): OrderLog[] => findOrderFor(params, ledger).logs.slice();

const queryAccountDetails: Operation = (params, { ledger }): AccountDetails => {
  const startDate = optionalDate(params, 'startDate');
  const endDate = optionalDate(params, 'endDate');
  if (startDate !== undefined && endDate !== undefined && startDate > endDate) {
    throw invalidParameter('startDate', `must not be after endDate (${startDate} > ${endDate})`);
  }
  const orderId = optionalString(params, 'orderId');
  const sellerOrderNo = optionalString(params, 'sellerOrderNo');
  let rows: BillRow[];
  if (orderId === undefined && sellerOrderNo === undefined) {
    rows = ledger.billRows(startDate, endDate);
  } else {
    // Filters narrow the result; an unknown order simply matches no rows.
    const order = orderId !== undefined ? ledger.findOrder(orderId) : ledger.findOrderBySellerOrderNo(sellerOrderNo as string);
    const matches = order !== undefined && (sellerOrderNo === undefined || order.sellerOrderNo === sellerOrderNo);
    rows = matches ? ledger.billRows(startDate, endDate, order) : [];
  }
  return { total: rows.length, records: rows.length, rows };
};

const createPreOrder: Operation = (params, { ledger, epochMs }): { preorderId: string } => {
  optionalEnum(params, 'orderTypeId', [1, 2]);
  const expressTypeId = readExpressTypeId(params, false) ?? 1;
  const expressTagIds = readTags(params);
  const goodsWeight = readWeight(params, false) ?? 1;
  optionalAmount(params, 'goodsPayment');
  const offer = optionalAmount(params, 'offerAmount');
  const payCents =
    offer !== undefined
      ? toCents(offer)
      : estimateFee({ expressTypeId, goodsWeight, fetchTypeId: 11, sendTypeId: 21, expressTagIds, couponCents: 0 }).payCents;
  const preOrder = ledger.addPreOrder(optionalString(params, 'sellerOrderNo', MAX_REFERENCE_LENGTH), payCents, epochMs);
  return { preorderId: preOrder.preorderId };
};

const queryPreOrderStatus: Operation = (params, { ledger, epochMs, autoConfirmAfterMs }): PreOrderStatus => {
  const preorderId = requiredString(params, 'preorderId');
  let preOrder = ledger.findPreOrder(preorderId);
  if (preOrder.statusId === 1 && autoConfirmAfterMs !== undefined && epochMs - preOrder.createdAt >= autoConfirmAfterMs) {
    preOrder = ledger.confirmPreOrder(preorderId, epochMs);
  }
  return preOrderStatus(preOrder.preorderId, preOrder.statusId, preOrder.orderId);
};

/** The operation table: one function per upstream api name. */
export const OPERATIONS: Readonly<Record<CourierOperationName, Operation>> = Object.freeze({
  get_address: getAddress,
  get_express_type: getExpressType,
  get_express_tags: getExpressTags,
  get_balance: getBalance,
  get_coupon: getCoupon,
  billing_fee: billingFee,
  create_order: createOrder,
  create_agent_order: createAgentOrder,
  cancel_order: cancelOrder,
  query_order_logs: queryOrderLogs,
  query_account_details: queryAccountDetails,
  create_pre_order: createPreOrder,
  query_pre_order_status: queryPreOrderStatus,
});

const operationByName: ReadonlyMap<string, Operation> = new Map(Object.entries(OPERATIONS));

/** The operation for an api name, or undefined (no prototype lookups: 'toString' is unknown). */
export function findOperation(api: unknown): Operation | undefined {
  return typeof api === 'string' ? operationByName.get(api) : undefined;
}
