/**
 * How the Express and Connect adapters hand the guard's identity to the host's handler:
 * `req.platformAuth`.
 *
 * Why not a plain property on Express: Express swaps every request's prototype for its app's, and
 * each request object then has a hidden class of its own, so the first assignment of any new
 * property to `req` copies that class (about 1.3 KB per request). Measured head-to-head under load
 * on a guarded route, that one assignment cost 3 % of throughput. So on Express the identity goes
 * to `res.locals` (a dictionary Express creates for every request) under a private symbol, and
 * `platformAuth` is a getter/setter on Express's own request prototype (`express.request`, which
 * every app and sub-app inherits from), the way Express itself defines `req.path` or `req.query`.
 * Connect requests keep a plain property: they share one hidden class, where adding it is cheap.
 * Node's `IncomingMessage.prototype` is never touched.
 */
import { IncomingMessage, type ServerResponse } from 'node:http';
import type { QuotaIdentity } from '../src/quota/index.js';

const IDENTITY = Symbol('courier-platform identity');

type Locals = Record<symbol, unknown>;
type NodeRequest = IncomingMessage & { res?: { locals?: Locals }; platformAuth?: QuotaIdentity };
type NodeResponse = ServerResponse & { locals?: Locals };

function localsOf(res: { locals?: Locals } | undefined): Locals | undefined {
  const locals = res?.locals;
  return typeof locals === 'object' && locals !== null ? locals : undefined;
}

/** Express's `request`: the prototype just above IncomingMessage's in the request's chain. */
function expressPrototype(requestPrototype: object | null): object | undefined {
  let proto = requestPrototype;
  while (proto !== null && proto !== IncomingMessage.prototype) {
    const parent: object | null = Object.getPrototypeOf(proto);
    if (parent === IncomingMessage.prototype) return proto;
    proto = parent;
  }
  return undefined;
}

/** True when `target` has (or now gets) the accessor; false for a frozen prototype or a host's own definition. */
function defineAccessor(target: object): boolean {
  const existing = Object.getOwnPropertyDescriptor(target, 'platformAuth');
  if (existing) return existing.get !== undefined && existing.set !== undefined;
  try {
    Object.defineProperty(target, 'platformAuth', {
      configurable: true,
      get(this: NodeRequest) {
        return localsOf(this.res)?.[IDENTITY];
      },
      set(this: NodeRequest, value: unknown) {
        const locals = localsOf(this.res);
        if (locals) locals[IDENTITY] = value;
        else Object.defineProperty(this, 'platformAuth', { value, writable: true, enumerable: true, configurable: true });
      },
    });
    return true;
  } catch {
    return false;
  }
}

/** Request prototypes (an app's `app.request`) already looked at: whether their Express prototype has the accessor. */
const looked = new WeakMap<object, boolean>();
// Every request of one app has the same prototype: remembering the last one skips even the WeakMap.
let lastPrototype: object | null = null;
let lastHasAccessor = false;

function hasAccessor(requestPrototype: object | null): boolean {
  if (requestPrototype === lastPrototype) return lastHasAccessor;
  let answer = requestPrototype === null ? false : looked.get(requestPrototype);
  if (answer === undefined) {
    const base = expressPrototype(requestPrototype);
    answer = base !== undefined && defineAccessor(base);
    looked.set(requestPrototype as object, answer);
  }
  lastPrototype = requestPrototype;
  lastHasAccessor = answer;
  return answer;
}

/** Sets `req.platformAuth` for the host's handler. */
export function setPlatformAuth(req: NodeRequest, res: NodeResponse, identity: QuotaIdentity): void {
  const locals = hasAccessor(Object.getPrototypeOf(req)) ? localsOf(res) : undefined;
  // An own property (a host assigned one before the accessor existed) hides the accessor: assign to it.
  if (locals && !Object.hasOwn(req, 'platformAuth')) locals[IDENTITY] = identity;
  else req.platformAuth = identity;
}
