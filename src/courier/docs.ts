/**
 * What the API document says of each courier operation: a summary, a request the bundled
 * sandbox accepts, and the `data` of a success. The `data` shapes are what the sandbox answers
 * (docs/courier.md); objects stay open because a real upstream may add fields.
 */
import { z } from 'zod';
import type { CourierOperationName } from './operations.js';

export interface CourierOperationDoc {
  summary: string;
  /** A valid request (body of a POST); absent for the GET operations, which take no parameters. */
  example?: Record<string, unknown>;
  /** `data` of a success (`code` 0). */
  data: z.ZodType;
}

const mansion = z.object({ mansionId: z.number(), mansionName: z.string(), floors: z.array(z.object({ floorId: z.number(), floorName: z.string() })) });
const createdOrder = z.object({ orderId: z.string(), companyId: z.number(), printImgUrl: z.string() });

/** Ids of the sandbox's dictionaries (get_address, get_express_type). */
const ORDER = {
  orderTypeId: 2,
  sendTypeId: 21,
  fetchTypeId: 11,
  paymentId: 1,
  expressTypeId: 1,
  customerCname: 'Acme Ltd',
  customerContacts: 'Ana Silva',
  customerMobileNumber: '+853 6612 3456',
  customerMansionId: 1,
  customerFloorId: 101,
  customerHouseNumber: 'A3',
  myContacts: 'Bo Chen',
  myMobileNumber: '(853) 2888-0000',
  myMansionId: 2,
  myFloorId: 201,
  myHouseNumber: '12B',
  goodsWeight: 1.5,
  goodsCollection: 0,
  goodsPayment: 0,
  goods: [{ goodsName: 'Tea', goodsNum: 2, goodsAmount: 30 }],
};

export const courierDocs: Readonly<Record<CourierOperationName, CourierOperationDoc>> = {
  get_address: { summary: 'Buildings with their floors', data: z.array(mansion) },
  get_express_type: { summary: 'Express types', data: z.array(z.object({ expressTypeId: z.number(), expressTypeName: z.string() })) },
  get_express_tags: { summary: 'Express tags', data: z.array(z.object({ expressTagId: z.number(), expressTagName: z.string() })) },
  get_balance: {
    summary: 'Balance and credit',
    data: z.object({
      isCredit: z.literal([0, 1]),
      creditDays: z.number(),
      creditAmount: z.number(),
      creditBalance: z.number(),
      onlineBalance: z.number(),
      proxyBalance: z.number(),
    }),
  },
  get_coupon: {
    summary: 'Coupons',
    data: z.array(z.object({ couponId: z.number(), validityBtime: z.string(), validityEtime: z.string(), couponAmount: z.number() })),
  },
  billing_fee: {
    summary: 'A fee estimate',
    example: ORDER,
    data: z.object({
      serviceCharge: z.number(),
      payAmount: z.number(),
      fetchServiceCharge: z.number(),
      sendServiceCharge: z.number(),
      overweightServiceCharge: z.number(),
      surcharge: z.array(z.unknown()),
      couponAmount: z.number(),
    }),
  },
  create_order: { summary: 'Create an order; never retried', example: ORDER, data: createdOrder },
  create_agent_order: {
    summary: 'Create an order paid by e-wallet, with its payment address; never retried',
    example: { ...ORDER, paymentId: 2 },
    data: createdOrder.extend({ payInfo: z.string() }),
  },
  cancel_order: {
    summary: 'Cancel an order; never retried',
    example: { orderId: 'SO20260101000001', cancelMemo: 'changed my mind' },
    data: z.object({ orderId: z.string() }),
  },
  query_order_logs: {
    summary: "An order's operation trail",
    example: { orderId: 'SO20260101000001' },
    data: z.array(
      z.object({
        opId: z.number(),
        opTypeName: z.string(),
        opTime: z.string(),
        opText: z.string(),
        opImg: z.string(),
        opName: z.string(),
        opMobilePhone: z.string(),
      }),
    ),
  },
  query_account_details: {
    summary: 'Bill rows between two dates',
    example: { startDate: '2026-01-01', endDate: '2026-01-31' },
    data: z.object({
      total: z.number(),
      records: z.number(),
      rows: z.array(z.object({ orderId: z.string(), feeTypeName: z.string(), titleTypeName: z.string(), costAmount: z.number(), incomeAmount: z.number() })),
    }),
  },
  create_pre_order: {
    summary: 'Create a pre-order for free-text addresses; never retried',
    example: {
      orderTypeId: 1,
      expressTypeId: 1,
      customerContacts: 'Ana Silva',
      customerMobileNumber: '+853 6612 3456',
      customerAddress: '5 Harbour Road, unit 3',
      myContacts: 'Bo Chen',
      myMobileNumber: '(853) 2888-0000',
      myAddress: '12 Rua Central',
      goodsWeight: 2,
    },
    data: z.object({ preorderId: z.string() }),
  },
  query_pre_order_status: {
    summary: "A pre-order's status: 0 cancelled, 1 pending confirmation, 2 ordered (with its orderId)",
    example: { preorderId: 'PO20260101000001' },
    data: z.object({ preorderId: z.string(), statusId: z.literal([0, 1, 2]), statusName: z.string(), orderId: z.string().optional() }),
  },
};
