/**
 * The pure part of the sandbox: options, the call pipeline (body -> appId -> sign -> api ->
 * operation) and the per-app ledgers. No networking here; `listen()` delegates to server.ts.
 */
import type { UpstreamEnvelope } from '../courier/operations.js';
import { configurationError, type ConfigurationError } from '../core/errors.js';
import { isPlainObject } from '../core/plain-object.js';
import { resolveSigner, signaturesMatch, type Signer } from '../courier/signing.js';
import { SandboxCode, SandboxError, show } from './codes.js';
import { toCents } from './fees.js';
import { findOperation, type OperationContext } from './operations.js';
import { listenSandbox } from './server.js';
import { AppLedger, type BalanceCents, type IdSource } from './store.js';
import type { Sandbox, SandboxBalance, SandboxOptions, StartSandboxOptions, StartedSandbox } from './types.js';

/** The app the sandbox accepts by default (also the example server's default credentials). */
export const SANDBOX_DEFAULT_APP_ID = 'sandbox-app';
/** The secret of {@link SANDBOX_DEFAULT_APP_ID}. */
export const SANDBOX_DEFAULT_APP_SECRET = 'sandbox-secret';

interface ResolvedConfig {
  readonly secrets: ReadonlyMap<string, string>;
  readonly signer: Signer;
  readonly now: () => Date;
  readonly autoConfirmAfterMs: number | undefined;
  readonly initialBalance: Readonly<BalanceCents>;
  readonly maxOrdersPerApp: number;
}

const OPTION_KEYS: ReadonlySet<string> = new Set<keyof SandboxOptions>([
  'apps',
  'signer',
  'now',
  'autoConfirmPreOrdersAfterMs',
  'initialBalance',
  'maxOrdersPerApp',
]);
const BALANCE_KEYS: ReadonlySet<string> = new Set<keyof SandboxBalance>([
  'isCredit',
  'creditDays',
  'creditAmount',
  'creditBalance',
  'onlineBalance',
  'proxyBalance',
]);

/** Option errors name the field the way a caller of createSandbox writes it: `initialBalance.isCredit`. */
function invalid(field: string, message: string): ConfigurationError {
  return configurationError('invalid_option', field, `${message} (createSandbox)`);
}

function rejectUnknownKeys(value: Record<string, unknown>, known: ReadonlySet<string>, under: string): void {
  const unknown = Object.keys(value).filter((key) => !known.has(key));
  if (unknown.length > 0) {
    throw invalid(`${under}${unknown[0]}`, `is not an option; known: ${[...known].join(', ')}`);
  }
}

function nonNegative(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw invalid(name, `must be a finite number >= 0, got ${show(value)}`);
  }
  return value;
}

function resolveBalance(input: unknown): BalanceCents {
  if (input !== undefined && !isPlainObject(input)) {
    throw invalid('initialBalance', `must be an object, got ${show(input)}`);
  }
  const given = input ?? {};
  rejectUnknownKeys(given, BALANCE_KEYS, 'initialBalance.');
  const isCredit = given.isCredit ?? 1;
  if (isCredit !== 0 && isCredit !== 1) {
    throw invalid('initialBalance.isCredit', `must be 0 or 1, got ${show(isCredit)}`);
  }
  const creditDays = nonNegative(given.creditDays ?? 30, 'initialBalance.creditDays');
  if (!Number.isInteger(creditDays)) throw invalid('initialBalance.creditDays', 'must be an integer');
  const creditAmount = nonNegative(given.creditAmount ?? 5000, 'initialBalance.creditAmount');
  return {
    isCredit,
    creditDays,
    creditAmount: toCents(creditAmount),
    creditBalance: toCents(nonNegative(given.creditBalance ?? creditAmount, 'initialBalance.creditBalance')),
    onlineBalance: toCents(nonNegative(given.onlineBalance ?? 1000, 'initialBalance.onlineBalance')),
    proxyBalance: toCents(nonNegative(given.proxyBalance ?? 0, 'initialBalance.proxyBalance')),
  };
}

function resolveOptions(options: SandboxOptions): ResolvedConfig {
  const raw: unknown = options;
  if (!isPlainObject(raw)) throw invalid('options', `must be an object, got ${show(raw)}`);
  rejectUnknownKeys(raw, OPTION_KEYS, '');

  const apps = options.apps ?? { [SANDBOX_DEFAULT_APP_ID]: SANDBOX_DEFAULT_APP_SECRET };
  if (!isPlainObject(apps)) throw invalid('apps', 'must be an object of appId -> appSecret');
  const secrets = new Map<string, string>();
  for (const [appId, secret] of Object.entries(apps)) {
    if (appId === '' || typeof secret !== 'string' || secret === '') {
      // Name the app, never the secret.
      throw invalid(`apps[${JSON.stringify(appId)}]`, 'must be a non-empty appId with a non-empty string secret');
    }
    secrets.set(appId, secret);
  }
  if (secrets.size === 0) throw invalid('apps', 'must hold at least one appId');

  const now = options.now ?? (() => new Date());
  if (typeof now !== 'function') throw invalid('now', 'must be a function returning a Date');

  const autoConfirmAfterMs =
    options.autoConfirmPreOrdersAfterMs === undefined
      ? undefined
      : nonNegative(options.autoConfirmPreOrdersAfterMs, 'autoConfirmPreOrdersAfterMs');

  const maxOrdersPerApp = options.maxOrdersPerApp ?? 50_000;
  if (!Number.isSafeInteger(maxOrdersPerApp) || maxOrdersPerApp < 1) {
    throw invalid('maxOrdersPerApp', `must be an integer >= 1, got ${show(maxOrdersPerApp)}`);
  }

  return {
    secrets,
    signer: resolveSigner(options.signer ?? 'md5', 'signer'),
    now,
    autoConfirmAfterMs,
    initialBalance: Object.freeze(resolveBalance(options.initialBalance)),
    maxOrdersPerApp,
  };
}

/** Sandbox-wide sequences: `SO` / `PO` + yyyymmdd (UTC) + a 6-digit (or longer) sequence. */
function createIdSource(): IdSource {
  let orders = 0;
  let preOrders = 0;
  let ops = 0;
  let day = Number.NaN;
  let dayText = '';
  const yyyymmdd = (epochMs: number): string => {
    const d = Math.floor(epochMs / 86_400_000);
    if (d !== day) {
      day = d;
      dayText = new Date(epochMs).toISOString().slice(0, 10).replaceAll('-', '');
    }
    return dayText;
  };
  return {
    orderId: (epochMs) => `SO${yyyymmdd(epochMs)}${String(++orders).padStart(6, '0')}`,
    preorderId: (epochMs) => `PO${yyyymmdd(epochMs)}${String(++preOrders).padStart(6, '0')}`,
    opId: () => ++ops,
  };
}

function fail(code: SandboxCode, message: string): UpstreamEnvelope {
  return { code, message, data: null };
}

/**
 * Creates an in-memory sandbox of the upstream courier platform. Options are checked here; a bad
 * value throws a TypeError.
 *
 * @example
 * import { createSandbox } from 'courier-platform/sandbox';
 * const sandbox = createSandbox();
 * const running = await sandbox.listen();        // random port on 127.0.0.1
 * // point the courier proxy at running.url with appId 'sandbox-app', secret 'sandbox-secret'
 * await running.close();
 */
export function createSandbox(options: SandboxOptions = {}): Sandbox {
  const config = resolveOptions(options);
  const ids = createIdSource();
  const ledgers = new Map<string, AppLedger>();

  function ledgerOf(appId: string): AppLedger {
    let ledger = ledgers.get(appId);
    if (!ledger) {
      ledger = new AppLedger(appId, config.initialBalance, ids, config.maxOrdersPerApp);
      ledgers.set(appId, ledger);
    }
    return ledger;
  }

  function knownLedger(appId: unknown): AppLedger {
    if (typeof appId !== 'string' || !config.secrets.has(appId)) {
      throw new SandboxError(SandboxCode.UNKNOWN_APP, `unknown appId ${show(appId)}`);
    }
    return ledgerOf(appId);
  }

  function handle(body: unknown): UpstreamEnvelope {
    let secret: string | undefined;
    try {
      if (!isPlainObject(body)) return fail(SandboxCode.MALFORMED_BODY, 'body must be a JSON object');
      const appId = body.appId;
      secret = typeof appId === 'string' ? config.secrets.get(appId) : undefined;
      if (secret === undefined) return fail(SandboxCode.UNKNOWN_APP, `unknown appId ${show(appId)}`);

      const { sign, ...fields } = body;
      if (sign === undefined || sign === null || sign === '') {
        return fail(SandboxCode.INVALID_SIGNATURE, 'invalid signature: sign is missing');
      }
      if (!signaturesMatch(sign, config.signer(fields, secret))) {
        return fail(SandboxCode.INVALID_SIGNATURE, 'invalid signature: sign does not match the fields and the app secret');
      }

      const operation = findOperation(body.api);
      if (!operation) return fail(SandboxCode.UNKNOWN_API, `unknown api ${show(body.api)}`);

      const context: OperationContext = {
        ledger: ledgerOf(appId as string),
        epochMs: config.now().getTime(),
        autoConfirmAfterMs: config.autoConfirmAfterMs,
      };
      return { code: SandboxCode.OK, message: 'ok', data: operation(body, context) };
    } catch (error) {
      if (error instanceof SandboxError) return fail(error.code, error.message);
      const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
      const safe = secret ? reason.split(secret).join('***') : reason;
      return fail(SandboxCode.INTERNAL_ERROR, `internal sandbox error (${safe})`);
    }
  }

  const sandbox: Sandbox = {
    handle,
    confirmPreOrder(appId, preorderId) {
      const preOrder = knownLedger(appId).confirmPreOrder(preorderId, config.now().getTime());
      return preOrder.orderId as string;
    },
    cancelPreOrder(appId, preorderId) {
      knownLedger(appId).cancelPreOrder(preorderId);
    },
    listen: (listenOptions) => listenSandbox(sandbox, listenOptions),
  };
  return sandbox;
}

/**
 * Creates a sandbox and starts its HTTP server in one step.
 *
 * @example
 * import { startSandbox } from 'courier-platform/sandbox';
 * const upstream = await startSandbox({ port: 0 });
 * console.log(upstream.url); // http://127.0.0.1:<port>
 * await upstream.close();
 */
export async function startSandbox(options: StartSandboxOptions = {}): Promise<StartedSandbox> {
  const { port, host, ...sandboxOptions } = options;
  const sandbox = createSandbox(sandboxOptions);
  const running = await sandbox.listen({ port, host });
  return { url: running.url, port: running.port, close: running.close, sandbox };
}
