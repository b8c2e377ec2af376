/** Milliseconds since the epoch. Injected wherever time matters so expiry and roll-over are testable. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
