/**
 * The sandbox's coupons. Their validity windows are derived from the clock (whole UTC
 * days around "today"), so they are always valid now; the list is cached per UTC day.
 */
import { utcDayNumber } from './params.js';

/** `get_coupon` item. Times are ISO 8601 UTC strings. */
export interface Coupon {
  readonly couponId: number;
  readonly validityBtime: string;
  readonly validityEtime: string;
  readonly couponAmount: number;
}

const DAY_MS = 86_400_000;

/** The coupon templates: id, amount, first valid day and end day relative to today. */
const TEMPLATES = [
  { couponId: 9001, couponAmount: 5, fromDay: -7, toDay: 30 },
  { couponId: 9002, couponAmount: 10, fromDay: 0, toDay: 7 },
] as const;

let cachedDay = Number.NaN;
let cached: readonly Coupon[] = [];

/** The coupons valid on the UTC day of `epochMs`. */
export function couponsAt(epochMs: number): readonly Coupon[] {
  const day = utcDayNumber(epochMs);
  if (day !== cachedDay) {
    cached = Object.freeze(
      TEMPLATES.map((template) =>
        Object.freeze({
          couponId: template.couponId,
          validityBtime: new Date((day + template.fromDay) * DAY_MS).toISOString(),
          validityEtime: new Date((day + template.toDay) * DAY_MS).toISOString(),
          couponAmount: template.couponAmount,
        }),
      ),
    );
    cachedDay = day;
  }
  return cached;
}

/** The coupon with that id valid at `epochMs`, or undefined. */
export function findCoupon(couponId: number, epochMs: number): Coupon | undefined {
  return couponsAt(epochMs).find((coupon) => coupon.couponId === couponId);
}
