// oidc-provider 9 ships no types; only what bench/servers/oidc-provider.ts uses is declared.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Client {
    grantTypeAllowed(grant: string): boolean;
  }
  interface Account {
    accountId: string;
    claims(): Record<string, unknown>;
  }
  interface Configuration {
    adapter(model: string): unknown;
    clients: Record<string, unknown>[];
    jwks: { keys: Record<string, unknown>[] };
    scopes: string[];
    claims: Record<string, string[]>;
    cookies: { keys: string[] };
    features: Record<string, { enabled: boolean }>;
    interactions: { url(ctx: unknown, interaction: { uid: string }): string };
    issueRefreshToken(ctx: unknown, client: Client, code: { scopes: Set<string> }): boolean;
    rotateRefreshToken: boolean;
    findAccount(ctx: unknown, sub: string): Account;
  }
  interface Grant {
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  interface InteractionResult {
    login: { accountId: string };
    consent: { grantId: string };
  }

  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    Grant: new (init: { accountId: string; clientId: string }) => Grant;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<{ uid: string; params: Record<string, unknown> }>;
    interactionFinished(req: IncomingMessage, res: ServerResponse, result: InteractionResult, options: { mergeWithLastSubmission: boolean }): Promise<void>;
  }
  export type { Configuration };
}

declare module 'oidc-provider/lib/helpers/lru.js' {
  /** The bounded map behind the in-memory adapter. */
  export default class LRU {
    constructor(options: { maxSize: number });
  }
}

declare module 'oidc-provider/lib/adapters/memory_adapter.js' {
  import type LRU from 'oidc-provider/lib/helpers/lru.js';
  /** The default in-memory adapter: one model's records in `store` (shared by every model). */
  export default class MemoryAdapter {
    constructor(model: string, store: LRU);
  }
}
