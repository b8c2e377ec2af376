import type { PlatformRequest, PlatformResponse } from './http.js';
import { configurationError, MethodNotAllowedError, NotFoundError, PlatformError } from './errors.js';
import type { RouteDoc } from './route-doc.js';

/** The values of a route's `:name` segments, decoded. */
export type RouteParams = Readonly<Record<string, string>>;

export type Handler = (request: PlatformRequest, params: RouteParams) => Promise<PlatformResponse>;

export type ErrorFormatter = (error: PlatformError) => PlatformResponse;

export interface Route {
  method: string;
  /** Exact path, or with `:name` segments (`/admin/clients/:id`) that match one non-empty segment each. */
  path: string;
  handler: Handler;
  /** Formats errors thrown by this route (envelope, or RFC 6749 JSON on /oauth). */
  formatError: ErrorFormatter;
  /** What the route says of itself (see route-doc.ts); required, so no route is missing from the API document. */
  doc: RouteDoc;
}

/** A path prefix the platform owns; requests under it never fall through to the host. */
export interface Namespace {
  prefix: string;
  formatError: ErrorFormatter;
}

export type Match =
  | { kind: 'route'; route: Route; params: RouteParams }
  | { kind: 'error'; error: PlatformError; formatError: ErrorFormatter }
  | { kind: 'none' };

const SLASH = 0x2f;
const NO_PARAMS: RouteParams = Object.freeze({});

interface PatternRoutes {
  segments: readonly string[];
  byMethod: Map<string, Route>;
}

/** Trailing slashes are not significant: `/courier/get_address/` is `/courier/get_address`. */
export function normalizePath(path: string): string {
  // Every request of the host passes through `owns`: skip the regex unless there is a slash to strip.
  return path.length > 1 && path.charCodeAt(path.length - 1) === SLASH ? path.replace(/\/+$/, '') || '/' : path;
}

function paramsOf(pattern: readonly string[], path: string): RouteParams | undefined {
  const segments = path.split('/');
  if (segments.length !== pattern.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const want = pattern[i] as string;
    const got = segments[i] as string;
    if (want.startsWith(':')) {
      if (got === '') return undefined;
      try {
        params[want.slice(1)] = decodeURIComponent(got);
      } catch {
        return undefined; // a malformed %-escape matches nothing: the namespace's 404
      }
    } else if (want !== got) return undefined;
  }
  return params;
}

/**
 * The one route table of the platform: exact paths, looked up in a Map so a request that is not
 * the platform's costs one prefix scan before it falls through to the host. Paths with `:name`
 * segments live under a namespace and are tried only after the exact paths miss.
 */
export class Router {
  private readonly routes = new Map<string, Map<string, Route>>();
  private readonly patterns: PatternRoutes[] = [];
  private readonly namespaces: (Namespace & { under: string })[] = [];

  addNamespace(namespace: Namespace): void {
    this.namespaces.push({ ...namespace, under: `${namespace.prefix}/` });
  }

  add(route: Route): void {
    const byMethod = this.byMethodFor(route.path);
    if (byMethod.has(route.method)) throw configurationError('invalid_argument', 'route', `${route.method} ${route.path} is added twice`);
    byMethod.set(route.method, route);
  }

  /** Every route, in the order added. */
  list(): Route[] {
    return [...this.routes.values(), ...this.patterns.map((p) => p.byMethod)].flatMap((byMethod) => [...byMethod.values()]);
  }

  /** The prefixes of the namespaces, in the order added. */
  namespacePrefixes(): string[] {
    return this.namespaces.map((ns) => ns.prefix);
  }

  private byMethodFor(path: string): Map<string, Route> {
    if (!path.includes('/:')) {
      const byMethod = this.routes.get(path) ?? new Map<string, Route>();
      this.routes.set(path, byMethod);
      return byMethod;
    }
    if (!this.namespaces.some((ns) => path.startsWith(ns.under))) throw configurationError('invalid_argument', 'route', `${path} has parameters but lies in no namespace`);
    const segments = path.split('/');
    const existing = this.patterns.find((p) => p.segments.join('/') === path);
    if (existing) return existing.byMethod;
    const added: PatternRoutes = { segments, byMethod: new Map() };
    this.patterns.push(added);
    return added.byMethod;
  }

  /** Whether a path is the platform's at all (a route or under a namespace); synchronous and cheap. */
  owns(rawPath: string): boolean {
    const path = normalizePath(rawPath);
    if (this.routes.has(path)) return true;
    for (const ns of this.namespaces) if (path.startsWith(ns.under) || path === ns.prefix) return true;
    return false;
  }

  match(method: string, rawPath: string): Match {
    const path = normalizePath(rawPath);
    const exact = this.routes.get(path);
    if (exact) return this.pick(exact, method, NO_PARAMS);
    for (const pattern of this.patterns) {
      const params = paramsOf(pattern.segments, path);
      if (params) return this.pick(pattern.byMethod, method, params);
    }
    const namespace = this.namespaces.find((ns) => path.startsWith(ns.under) || path === ns.prefix);
    if (!namespace) return { kind: 'none' };
    return { kind: 'error', formatError: namespace.formatError, error: new NotFoundError(`No such endpoint: ${path}`) };
  }

  private pick(byMethod: Map<string, Route>, method: string, params: RouteParams): Match {
    const route = byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
    if (route) return { kind: 'route', route, params };
    const any = byMethod.values().next().value as Route;
    return { kind: 'error', formatError: any.formatError, error: new MethodNotAllowedError([...byMethod.keys()]) };
  }
}
