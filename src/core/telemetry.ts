/**
 * What the parts report for the operator's metrics (docs/operator.md#metrics). The parts call
 * these; the admin API's Prometheus registry implements them, and without it they do nothing.
 */
export type GuardOutcome = 'admitted' | 'rejected' | 'store_error';

/** `ok`: the upstream answered code 0; `refused`: it answered another code; `error`: no usable answer. */
export type CourierOutcome = 'ok' | 'refused' | 'error';

export interface Telemetry {
  /** `named`: the guard names its endpoint (`platform.quota(apiPath)`) or a client or global rule names the path, so the label is kept whatever the cap. */
  guardedCall(clientId: string, endpoint: string, outcome: GuardOutcome, named: boolean): void;
  tokenIssued(grantType: string): void;
  clientAuthFailed(): void;
  courierCall(operation: string, outcome: CourierOutcome, seconds: number): void;
  storeError(store: string): void;
}

const nothing = () => {};

export const noTelemetry: Telemetry = Object.freeze({
  guardedCall: nothing,
  tokenIssued: nothing,
  clientAuthFailed: nothing,
  courierCall: nothing,
  storeError: nothing,
});
