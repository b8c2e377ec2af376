/**
 * The sandbox tariff and its deterministic fee estimate. Everything is computed in
 * integer cents and returned in currency units rounded to cents.
 *
 * - Freight by express type: first kg + each further started kg, counted up to 20 kg.
 *   Standard 8.00 + 2.00/kg, Express 12.00 + 3.00/kg, Same-day 20.00 + 4.00/kg.
 * - Overweight: 5.00 for each started kg above 20 kg.
 * - Pick-up fee by fetchTypeId: 11 door 3.00, 12 store 0, 13 collect on behalf 2.00.
 * - Delivery fee by sendTypeId: 21 door 3.00, 22 store 0.
 * - Tag surcharges: Fragile 2.00, Urgent 5.00, Cold chain 8.00, Oversized 10.00.
 * - serviceCharge is the sum of all of the above; couponAmount is the coupon (capped at
 *   serviceCharge); payAmount = serviceCharge - couponAmount.
 */
import { EXPRESS_TAG_MASK, EXPRESS_TAGS } from './dictionary.js';

/** One value-added service line of a fee estimate. */
export interface Surcharge {
  readonly expressTagId: number;
  readonly name: string;
  readonly amount: number;
}

/** `billing_fee` data. */
export interface FeeEstimate {
  serviceCharge: number;
  payAmount: number;
  fetchServiceCharge: number;
  sendServiceCharge: number;
  overweightServiceCharge: number;
  surcharge: readonly Surcharge[];
  couponAmount: number;
}

export interface FeeInput {
  expressTypeId: number;
  goodsWeight: number;
  fetchTypeId?: number | undefined;
  sendTypeId?: number | undefined;
  expressTagIds: number;
  /** Value of the applied coupon, in cents (0 for none). */
  couponCents: number;
}

/** An estimate and the payable amount in cents (what a payment is charged with). */
export interface PricedFee {
  readonly estimate: FeeEstimate;
  readonly payCents: number;
}

/** Weight up to which the per-kg tariff applies; each started kg above it is overweight. */
export const OVERWEIGHT_ABOVE_KG = 20;
const OVERWEIGHT_CENTS_PER_KG = 500;

const TARIFF_CENTS: ReadonlyMap<number, { readonly firstKg: number; readonly extraKg: number }> = new Map([
  [1, { firstKg: 800, extraKg: 200 }],
  [2, { firstKg: 1200, extraKg: 300 }],
  [3, { firstKg: 2000, extraKg: 400 }],
]);
const FETCH_CENTS: ReadonlyMap<number, number> = new Map([
  [11, 300],
  [12, 0],
  [13, 200],
]);
const SEND_CENTS: ReadonlyMap<number, number> = new Map([
  [21, 300],
  [22, 0],
]);
const TAG_CENTS: ReadonlyMap<number, number> = new Map([
  [1, 200],
  [2, 500],
  [4, 800],
  [8, 1000],
]);

/** Surcharge lines and their total for every valid tag combination, built once. */
const SURCHARGES: readonly { readonly lines: readonly Surcharge[]; readonly cents: number }[] = Array.from(
  { length: EXPRESS_TAG_MASK + 1 },
  (_, mask) => {
    const tags = EXPRESS_TAGS.filter((tag) => (mask & tag.expressTagId) !== 0);
    const lines = tags.map((tag) =>
      Object.freeze({
        expressTagId: tag.expressTagId,
        name: tag.expressTagName,
        amount: toAmount(TAG_CENTS.get(tag.expressTagId) ?? 0),
      }),
    );
    return Object.freeze({ lines: Object.freeze(lines), cents: tags.reduce((sum, tag) => sum + (TAG_CENTS.get(tag.expressTagId) ?? 0), 0) });
  },
);

/** Cents to currency units. */
export function toAmount(cents: number): number {
  return cents / 100;
}

/** Currency units to whole cents (rounded). */
export function toCents(amount: number): number {
  return Math.round(amount * 100);
}

/**
 * The fee estimate. The caller has checked the ids (known express type, valid tag bits, known
 * fetch and send types) and that the weight is > 0.
 */
export function estimateFee(input: FeeInput): PricedFee {
  const tariff = TARIFF_CENTS.get(input.expressTypeId) ?? { firstKg: 0, extraKg: 0 };
  const kg = Math.max(1, Math.ceil(input.goodsWeight));
  const freight = tariff.firstKg + (Math.min(kg, OVERWEIGHT_ABOVE_KG) - 1) * tariff.extraKg;
  const overweight = Math.max(0, kg - OVERWEIGHT_ABOVE_KG) * OVERWEIGHT_CENTS_PER_KG;
  const fetch = input.fetchTypeId === undefined ? 0 : (FETCH_CENTS.get(input.fetchTypeId) ?? 0);
  const send = input.sendTypeId === undefined ? 0 : (SEND_CENTS.get(input.sendTypeId) ?? 0);
  const surcharge = SURCHARGES[input.expressTagIds & EXPRESS_TAG_MASK] ?? { lines: [], cents: 0 };
  const service = freight + overweight + fetch + send + surcharge.cents;
  const coupon = Math.min(Math.max(0, input.couponCents), service);
  const payCents = service - coupon;
  return {
    payCents,
    estimate: {
      serviceCharge: toAmount(service),
      payAmount: toAmount(payCents),
      fetchServiceCharge: toAmount(fetch),
      sendServiceCharge: toAmount(send),
      overweightServiceCharge: toAmount(overweight),
      surcharge: surcharge.lines,
      couponAmount: toAmount(coupon),
    },
  };
}
