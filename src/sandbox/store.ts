/**
 * In-memory state of one app of the sandbox: orders, pre-orders, their logs, bill rows and the
 * balance. Two apps never share a ledger. Amounts are kept in integer cents.
 */
import { SandboxCode, SandboxError, show } from './codes.js';
import { toAmount } from './fees.js';
import type { BillRow, OrderLog, SandboxBalance } from './types.js';

/** Pre-order status: 0 cancelled, 1 pending confirmation, 2 ordered. */
export type PreOrderStatusId = 0 | 1 | 2;

/** Where the money for an order comes from: the credit line, the freight balance, or outside. */
export type Funding = 'credit' | 'balance' | 'external';

export interface OrderRecord {
  readonly orderId: string;
  readonly sellerOrderNo: string | undefined;
  readonly paymentName: string;
  readonly funding: Funding;
  readonly payCents: number;
  readonly createdAt: number;
  cancelled: boolean;
  readonly logs: OrderLog[];
  readonly bills: BillRow[];
}

export interface PreOrderRecord {
  readonly preorderId: string;
  readonly sellerOrderNo: string | undefined;
  readonly createdAt: number;
  /** What the order made from this pre-order costs (offerAmount, else the estimate). */
  readonly payCents: number;
  statusId: PreOrderStatusId;
  orderId: string | undefined;
}

export interface NewOrder {
  sellerOrderNo: string | undefined;
  paymentName: string;
  funding: Funding;
  payCents: number;
  /** opText of the 'created' log entry. */
  text: string;
}

/** Sandbox-wide id sequences, so ids are unique across apps and deterministic. */
export interface IdSource {
  orderId(epochMs: number): string;
  preorderId(epochMs: number): string;
  opId(): number;
}

/** The balance as the ledger keeps it: the same fields, amounts in whole cents so sums stay exact. */
export type BalanceCents = SandboxBalance;

const OPERATOR = { opImg: '', opName: 'Sandbox courier', opMobilePhone: '10000000000' } as const;

export const PRE_ORDER_STATUS_NAMES: Readonly<Record<PreOrderStatusId, string>> = Object.freeze({
  0: 'cancelled',
  1: 'pending confirmation',
  2: 'ordered',
});

export class AppLedger {
  private readonly orders = new Map<string, OrderRecord>();
  private readonly ordersBySeller = new Map<string, OrderRecord>();
  private readonly preOrders = new Map<string, PreOrderRecord>();
  private readonly preOrdersBySeller = new Map<string, PreOrderRecord>();
  /** Every bill row of the app in the order written. */
  private bills: BillRow[] = [];
  private readonly balance: BalanceCents;

  constructor(
    readonly appId: string,
    initialBalance: Readonly<BalanceCents>,
    private readonly ids: IdSource,
    /** Oldest orders (and pre-orders) beyond this many are forgotten, in batches. */
    private readonly maxRecords: number,
  ) {
    this.balance = { ...initialBalance };
  }

  balanceView(): SandboxBalance {
    const b = this.balance;
    return {
      isCredit: b.isCredit,
      creditDays: b.creditDays,
      creditAmount: toAmount(b.creditAmount),
      creditBalance: toAmount(b.creditBalance),
      onlineBalance: toAmount(b.onlineBalance),
      proxyBalance: toAmount(b.proxyBalance),
    };
  }

  /** Throws 40901 when an order or pre-order of this app already uses the number. */
  assertSellerOrderNoFree(sellerOrderNo: string | undefined): void {
    if (sellerOrderNo === undefined) return;
    const owner = this.ordersBySeller.get(sellerOrderNo)?.orderId ?? this.preOrdersBySeller.get(sellerOrderNo)?.preorderId;
    if (owner !== undefined) {
      throw new SandboxError(
        SandboxCode.DUPLICATE_SELLER_ORDER_NO,
        `duplicate sellerOrderNo ${show(sellerOrderNo)}: already used by ${owner}`,
      );
    }
  }

  /** Throws 40904 / 40903 when the funding source cannot pay `cents`; takes nothing. */
  assertCanPay(funding: Funding, cents: number): void {
    const b = this.balance;
    if (funding === 'credit') {
      if (b.isCredit !== 1) {
        throw new SandboxError(SandboxCode.CREDIT_NOT_ENABLED, 'credit payment (paymentId 11) is not enabled for this app');
      }
      if (b.creditBalance < cents) {
        throw new SandboxError(
          SandboxCode.INSUFFICIENT_BALANCE,
          `insufficient credit: payAmount ${toAmount(cents)} exceeds creditBalance ${toAmount(b.creditBalance)}`,
        );
      }
    } else if (funding === 'balance' && b.onlineBalance < cents) {
      throw new SandboxError(
        SandboxCode.INSUFFICIENT_BALANCE,
        `insufficient balance: payAmount ${toAmount(cents)} exceeds onlineBalance ${toAmount(b.onlineBalance)}`,
      );
    }
  }

  private move(funding: Funding, cents: number): void {
    if (funding === 'credit') this.balance.creditBalance += cents;
    else if (funding === 'balance') this.balance.onlineBalance += cents;
  }

  /** Creates an order (charging its funding source), with a 'created' log and a bill row. */
  addOrder(init: NewOrder, epochMs: number): OrderRecord {
    this.assertSellerOrderNoFree(init.sellerOrderNo);
    this.assertCanPay(init.funding, init.payCents);
    return this.insertOrder(init, epochMs);
  }

  private insertOrder(init: NewOrder, epochMs: number): OrderRecord {
    this.move(init.funding, -init.payCents);
    const orderId = this.ids.orderId(epochMs);
    const opTime = new Date(epochMs).toISOString();
    const created = this.logEntry('created', init.text, opTime);
    const charged = billRow(orderId, 'freight', init.paymentName, init.payCents, 0, opTime);
    // Arrays built with their first element keep a capacity of 1 (memory per order matters
    // when a benchmark creates hundreds of thousands).
    const order: OrderRecord = {
      orderId,
      sellerOrderNo: init.sellerOrderNo,
      paymentName: init.paymentName,
      funding: init.funding,
      payCents: init.payCents,
      createdAt: epochMs,
      cancelled: false,
      logs: [created],
      bills: [charged],
    };
    this.orders.set(orderId, order);
    if (order.sellerOrderNo !== undefined) this.ordersBySeller.set(order.sellerOrderNo, order);
    this.bills.push(charged);
    if (this.orders.size > this.maxRecords) this.trimOrders();
    return order;
  }

  findOrder(orderId: string): OrderRecord | undefined {
    return this.orders.get(orderId);
  }

  findOrderBySellerOrderNo(sellerOrderNo: string): OrderRecord | undefined {
    return this.ordersBySeller.get(sellerOrderNo);
  }

  /** Cancels an order: refund to its funding source, 'cancelled' log, refund bill row. */
  cancelOrder(orderId: string, memo: string | undefined, epochMs: number): OrderRecord {
    const order = this.orders.get(orderId);
    if (!order) throw orderNotFound('orderId', orderId);
    if (order.cancelled) {
      throw new SandboxError(SandboxCode.ORDER_ALREADY_CANCELLED, `order ${orderId} is already cancelled`);
    }
    order.cancelled = true;
    this.move(order.funding, order.payCents);
    const opTime = new Date(epochMs).toISOString();
    order.logs.push(this.logEntry('cancelled', memo ? `Order cancelled: ${memo}` : 'Order cancelled', opTime));
    const refund = billRow(order.orderId, 'freight refund', order.paymentName, 0, order.payCents, opTime);
    order.bills.push(refund);
    this.bills.push(refund);
    return order;
  }

  /**
   * Bill rows whose UTC day is within [startDate, endDate] (`YYYY-MM-DD`, either bound optional),
   * optionally only those of one order, in the order they were written. ISO opTimes compare as
   * strings: a day's times sort after 'YYYY-MM-DD' and before 'YYYY-MM-DDU'.
   */
  billRows(startDate: string | undefined, endDate: string | undefined, order?: OrderRecord): BillRow[] {
    const source = order ? order.bills : this.bills;
    if (startDate === undefined && endDate === undefined) return source.slice();
    const from = startDate ?? '';
    const before = endDate === undefined ? '\uffff' : `${endDate}U`;
    return source.filter((row) => row.opTime >= from && row.opTime < before);
  }

  addPreOrder(sellerOrderNo: string | undefined, payCents: number, epochMs: number): PreOrderRecord {
    this.assertSellerOrderNoFree(sellerOrderNo);
    const preOrder: PreOrderRecord = {
      preorderId: this.ids.preorderId(epochMs),
      sellerOrderNo,
      createdAt: epochMs,
      payCents,
      statusId: 1,
      orderId: undefined,
    };
    this.preOrders.set(preOrder.preorderId, preOrder);
    if (sellerOrderNo !== undefined) this.preOrdersBySeller.set(sellerOrderNo, preOrder);
    if (this.preOrders.size > this.maxRecords) this.trimPreOrders();
    return preOrder;
  }

  findPreOrder(preorderId: string): PreOrderRecord {
    const preOrder = this.preOrders.get(preorderId);
    if (!preOrder) {
      throw new SandboxError(SandboxCode.PRE_ORDER_NOT_FOUND, `pre-order ${show(preorderId)} not found`);
    }
    return preOrder;
  }

  private pending(preorderId: string, action: string): PreOrderRecord {
    const preOrder = this.findPreOrder(preorderId);
    if (preOrder.statusId !== 1) {
      throw new SandboxError(
        SandboxCode.PRE_ORDER_NOT_PENDING,
        `cannot ${action} pre-order ${preorderId}: its status is ${preOrder.statusId} (${PRE_ORDER_STATUS_NAMES[preOrder.statusId]}), not 1 (pending confirmation)`,
      );
    }
    return preOrder;
  }

  /** Pending pre-order -> status 2 with a new order (paid outside, like paymentId 1). */
  confirmPreOrder(preorderId: string, epochMs: number): PreOrderRecord {
    const preOrder = this.pending(preorderId, 'confirm');
    // The pre-order reserved its sellerOrderNo; the order inherits it, so no uniqueness check here.
    const order = this.insertOrder(
      {
        sellerOrderNo: preOrder.sellerOrderNo,
        paymentName: 'card payment',
        funding: 'external',
        payCents: preOrder.payCents,
        text: `Order created from pre-order ${preOrder.preorderId}`,
      },
      epochMs,
    );
    preOrder.statusId = 2;
    preOrder.orderId = order.orderId;
    return preOrder;
  }

  /** Pending pre-order -> status 0. Its sellerOrderNo stays taken. */
  cancelPreOrder(preorderId: string): PreOrderRecord {
    const preOrder = this.pending(preorderId, 'cancel');
    preOrder.statusId = 0;
    return preOrder;
  }

  private logEntry(opTypeName: string, opText: string, opTime: string): OrderLog {
    return Object.freeze({ opId: this.ids.opId(), opTypeName, opTime, opText, ...OPERATOR });
  }

  /** Forgets the oldest tenth of the orders (with their bill rows) in one pass. */
  private trimOrders(): void {
    forgetOldest(this.orders, this.ordersBySeller, this.trimBatch());
    this.bills = this.bills.filter((row) => this.orders.has(row.orderId));
  }

  private trimPreOrders(): void {
    forgetOldest(this.preOrders, this.preOrdersBySeller, this.trimBatch());
  }

  private trimBatch(): number {
    return Math.max(1, Math.ceil(this.maxRecords / 10));
  }
}

/**
 * Drops the first `count` records (a Map iterates in insertion order, so the oldest) and the
 * seller numbers that still point at them; a number taken over by a later record stays.
 */
function forgetOldest<T extends { sellerOrderNo?: string }>(records: Map<string, T>, bySeller: Map<string, T>, count: number): void {
  for (const [id, record] of records) {
    if (count-- <= 0) break;
    records.delete(id);
    if (record.sellerOrderNo !== undefined && bySeller.get(record.sellerOrderNo) === record) bySeller.delete(record.sellerOrderNo);
  }
}

function billRow(
  orderId: string,
  feeTypeName: string,
  titleTypeName: string,
  costCents: number,
  incomeCents: number,
  opTime: string,
): BillRow {
  return Object.freeze({
    orderId,
    feeTypeName,
    titleTypeName,
    costAmount: toAmount(costCents),
    incomeAmount: toAmount(incomeCents),
    opTime,
  });
}

export function orderNotFound(field: string, value: string): SandboxError {
  return new SandboxError(SandboxCode.ORDER_NOT_FOUND, `order not found: no order with ${field} ${show(value)} for this app`);
}
