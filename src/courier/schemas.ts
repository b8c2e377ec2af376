import { isPlainObject } from '../core/plain-object.js';
import { z } from 'zod';
import type { CourierOperationName } from './operations.js';

// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------

/** Dictionary ids (buildings, floors, express types) come from the upstream and start at 1. */
const id = z.number().int().positive();
/** Money is never negative; 0 is how the courier API says "none" (goodsCollection, goodsPayment). */
const money = z.number().nonnegative();
/**
 * A JSON escape may name half of a surrogate pair (`"\ud800"`), which is no character (RFC 8259
 * 8.2). Signed, it is hashed as U+FFFD, so it would share its sign with `"\ufffd"`, and each
 * upstream decodes it its own way: refused before it is signed (docs/courier.md#validation). A
 * refinement rather than a pattern, so the OpenAPI document does not carry a `\p{…}` class that
 * not every client's regular expressions can compile.
 */
const LONE_SURROGATE = /\p{Cs}/u;
const wholeCharacters = (value: string) => !LONE_SURROGATE.test(value);

/** Trimmed so a value that is only spaces counts as empty instead of reaching the courier. */
const text = (max: number) =>
  z
    .string()
    .trim()
    .min(1)
    .max(max)
    .refine(wholeCharacters, { message: 'must be Unicode text: a lone surrogate escape such as \\ud800 is no character', params: { rule: 'format' } });
/** No country format: the courier serves several regions, so only the characters are checked. */
const phone = text(32).regex(/^[0-9+\-() ]+$/, 'must contain only digits, spaces and + - ( )');

const DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

function isCalendarDate(value: string): boolean {
  const match = DATE_PATTERN.exec(value);
  if (!match) return false;
  const [year, month, day] = match.slice(1).map(Number) as [number, number, number];
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const daysInMonth = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
  return daysInMonth !== undefined && day >= 1 && day <= daysInMonth;
}

/** YYYY-MM-DD; the calendar check only runs on a well-formed string so one mistake gives one issue. */
const date = z
  .string()
  .regex(DATE_PATTERN, 'must be a date in YYYY-MM-DD form')
  .refine(isCalendarDate, {
    message: 'is not a real calendar date',
    params: { rule: 'date' },
    when: (payload) => payload.issues.length === 0,
  });

const isEmpty = (value: unknown): boolean => typeof value === 'string' && value.trim() === '';

/**
 * An optional field sent as an empty string (or only spaces) counts as not sent: it is left out
 * of the body forwarded, as the canonical string leaves every empty value out of the signature.
 * Form builders send '' for a field left blank; a required field sent empty still fails.
 */
function emptyOptionalsOmitted<T extends z.ZodObject>(object: T) {
  const optional = new Set(Object.keys(object.shape).filter((key) => object.shape[key]!.safeParse(undefined).success));
  const omitted = (input: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(input).filter(([key, value]) => !(optional.has(key) && isEmpty(value))));
  return z.preprocess((input) => (isPlainObject(input) ? omitted(input) : input), object);
}

/**
 * zod skips object refinements as soon as any field fails; a caller fixing a body wants every
 * problem at once, so a cross-field rule runs whenever the fields it compares are themselves valid.
 */
function whenFieldsValid(...fields: readonly string[]) {
  return (payload: z.core.ParsePayload): boolean =>
    isPlainObject(payload.value) &&
    !payload.issues.some((issue) => fields.includes(String(issue.path?.[0])));
}

// ---------------------------------------------------------------------------------------------
// Enumerations
// ---------------------------------------------------------------------------------------------

const orderTypeId = z.literal([1, 2]);
const sendTypeId = z.literal([21, 22]);
const fetchTypeId = z.literal([11, 12, 13]);
const normalPaymentId = z.literal([1, 11, 12]);
const agentPaymentId = z.literal([1, 2]);
/** Several tags are combined into one value by the upstream rule, so 0 (no tag) is valid. */
const expressTagIds = z.number().int().nonnegative();
const returnPrintImg = z.literal([0, 1]);

// ---------------------------------------------------------------------------------------------
// Shared field definitions
// ---------------------------------------------------------------------------------------------

const name = text(64);
const houseNumber = text(64);
const address = text(255);
const memo = text(500);
const reference = text(64);

const goodsLine = emptyOptionalsOmitted(
  z.strictObject({
    goodsName: text(128),
    goodsNum: z.number().int().positive().optional(),
    goodsAmount: money.optional(),
    goodsDesc: text(255).optional(),
  }),
);

/** The create_order fields; normal and agent orders differ only in paymentId. */
function orderObject<P extends z.ZodType<number>>(paymentId: P) {
  return z.strictObject({
    orderTypeId,
    sendTypeId,
    fetchTypeId,
    paymentId,
    sellerOrderNo: reference.optional(),
    sellerQrcode: reference.optional(),
    createMemo: memo.optional(),
    expressTypeId: id,
    expressTagIds: expressTagIds.optional(),
    customerCname: name,
    customerContacts: name,
    customerMobileNumber: phone,
    customerMansionId: id,
    customerFloorId: id,
    customerHouseNumber: houseNumber,
    myContacts: name,
    myMobileNumber: phone,
    myMansionId: id,
    myFloorId: id,
    myHouseNumber: houseNumber,
    goodsWeight: z.number().positive(),
    goodsCollection: money,
    goodsPayment: money,
    returnPrintImg: returnPrintImg.optional(),
    couponId: id.optional(),
    goods: z.array(goodsLine).max(100).optional(),
  });
}

/** What a fee estimate cannot be computed without: the route, the service and the weight. */
const ESTIMATE_REQUIRED = {
  orderTypeId: true,
  sendTypeId: true,
  fetchTypeId: true,
  paymentId: true,
  expressTypeId: true,
  customerMansionId: true,
  customerFloorId: true,
  myMansionId: true,
  myFloorId: true,
  goodsWeight: true,
} as const;

// ---------------------------------------------------------------------------------------------
// Cross-field rules
// ---------------------------------------------------------------------------------------------

/** Some fetch types exist for one order type only. */
const FETCH_TYPE_ONLY_FOR: Partial<Record<number, { orderTypeId: number; message: string }>> = {
  12: {
    orderTypeId: 2,
    message: 'fetchTypeId 12 (deliver to a store) is only allowed when orderTypeId is 2 (deliver goods)',
  },
  13: {
    orderTypeId: 1,
    message: 'fetchTypeId 13 (collect goods on behalf) is only allowed when orderTypeId is 1 (pick up goods)',
  },
};

function fetchTypeMatchesOrderType(order: { orderTypeId?: number; fetchTypeId?: number }, ctx: z.RefinementCtx) {
  const only = order.fetchTypeId === undefined ? undefined : FETCH_TYPE_ONLY_FOR[order.fetchTypeId];
  if (!only || order.orderTypeId === undefined || order.orderTypeId === only.orderTypeId) return;
  ctx.addIssue({
    code: 'custom',
    path: ['fetchTypeId'],
    message: only.message,
    params: { rule: 'fetch_type_for_order_type' },
    input: order.fetchTypeId,
  });
}

const onceOrderAndFetchTypeValid = { when: whenFieldsValid('orderTypeId', 'fetchTypeId') };

// ---------------------------------------------------------------------------------------------
// Schemas
// ---------------------------------------------------------------------------------------------

/** GET operations take no parameters; anything in the query string is a mistake worth reporting. */
const noParameters = z.strictObject({});

/**
 * One zod schema per courier operation; the proxy validates a caller's parameters with it before
 * signing and forwarding. Unknown fields are rejected everywhere so a typo is not silently dropped.
 *
 * Which fields are required:
 * - create_order / create_agent_order: every field but sellerOrderNo, sellerQrcode, createMemo,
 *   expressTagIds, returnPrintImg, couponId and goods; in a goods line only goodsName.
 * - billing_fee: the fields an estimate needs (order, send, fetch and payment type, expressTypeId,
 *   both mansion and floor ids, goodsWeight); every other create_order field is optional.
 * - cancel_order: only orderId. query_pre_order_status: only preorderId.
 * - query_order_logs: orderId or sellerOrderNo, at least one of them.
 * - query_account_details: startDate and endDate, with startDate <= endDate.
 * - create_pre_order: orderTypeId, expressTypeId, both parties' contact, phone and free-text
 *   address, goodsWeight; the rest optional.
 * - Order, pre-order and company references (orderId, preorderId, pushCompanyId, sellerOrderNo)
 *   are strings.
 * - Strings are trimmed. An optional field sent empty counts as not sent; a required one sent
 *   empty fails as too short.
 */
export const courierSchemas = {
  get_address: noParameters,
  get_express_type: noParameters,
  get_express_tags: noParameters,
  get_balance: noParameters,
  get_coupon: noParameters,

  billing_fee: emptyOptionalsOmitted(
    orderObject(normalPaymentId)
      .partial()
      .required(ESTIMATE_REQUIRED)
      .superRefine(fetchTypeMatchesOrderType, onceOrderAndFetchTypeValid),
  ),

  create_order: emptyOptionalsOmitted(orderObject(normalPaymentId).superRefine(fetchTypeMatchesOrderType, onceOrderAndFetchTypeValid)),

  create_agent_order: emptyOptionalsOmitted(orderObject(agentPaymentId).superRefine(fetchTypeMatchesOrderType, onceOrderAndFetchTypeValid)),

  cancel_order: emptyOptionalsOmitted(
    z.strictObject({
      orderId: reference,
      pushCompanyId: reference.optional(),
      cancelMemo: memo.optional(),
    }),
  ),

  query_order_logs: emptyOptionalsOmitted(
    z
      .strictObject({
        orderId: reference.optional(),
        pushCompanyId: reference.optional(),
        sellerOrderNo: reference.optional(),
      })
      .superRefine(
        (query, ctx) => {
          if (query.orderId !== undefined || query.sellerOrderNo !== undefined) return;
          ctx.addIssue({
            code: 'custom',
            path: ['orderId'],
            message: 'send orderId or sellerOrderNo',
            params: { rule: 'one_of_required' },
            input: undefined,
          });
        },
        { when: (payload) => isPlainObject(payload.value) },
      ),
  ),

  query_account_details: emptyOptionalsOmitted(
    z
      .strictObject({
        startDate: date,
        endDate: date,
        pushCompanyId: reference.optional(),
        orderId: reference.optional(),
        sellerOrderNo: reference.optional(),
      })
      .superRefine(
        (query, ctx) => {
          // Both are validated YYYY-MM-DD strings here, so string order is date order.
          if (query.startDate <= query.endDate) return;
          ctx.addIssue({
            code: 'custom',
            path: ['endDate'],
            message: `must not be before startDate (${query.startDate})`,
            params: { rule: 'date_range' },
            input: query.endDate,
          });
        },
        { when: whenFieldsValid('startDate', 'endDate') },
      ),
  ),

  create_pre_order: emptyOptionalsOmitted(
    z.strictObject({
      pushCompanyId: reference.optional(),
      orderTypeId,
      sellerOrderNo: reference.optional(),
      expressTypeId: id,
      expressTagIds: expressTagIds.optional(),
      customerCname: name.optional(),
      customerContacts: name,
      customerMobileNumber: phone,
      customerAddress: address,
      myContacts: name,
      myMobileNumber: phone,
      myAddress: address,
      goodsWeight: z.number().positive(),
      goodsPayment: money.optional(),
      offerAmount: money.optional(),
      returnPrintImg: returnPrintImg.optional(),
    }),
  ),

  query_pre_order_status: emptyOptionalsOmitted(
    z.strictObject({
      preorderId: reference,
      pushCompanyId: reference.optional(),
    }),
  ),
} satisfies Record<CourierOperationName, z.ZodType<Record<string, unknown>>>;
