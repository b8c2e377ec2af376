import type { PlatformRequest, PlatformResponse } from './http.js';
import { MethodNotAllowedError, NotFoundError, PlatformError } from './errors.js';

export type Handler = (request: PlatformRequest) => Promise<PlatformResponse>;

export type ErrorFormatter = (error: PlatformError) => PlatformResponse;

export interface Route {
  method: string;
  path: string;
  handler: Handler;
  /** Formats errors thrown by this route (envelope, or RFC 6749 JSON on /oauth). */
  formatError: ErrorFormatter;
}

/** A path prefix the platform owns; requests under it never fall through to the host. */
export interface Namespace {
  prefix: string;
  formatError: ErrorFormatter;
}

export type Match =
  | { kind: 'route'; route: Route }
  | { kind: 'error'; error: PlatformError; formatError: ErrorFormatter }
  | { kind: 'none' };

const SLASH = 0x2f;

/** Trailing slashes are not significant: `/courier/get_address/` is `/courier/get_address`. */
export function normalizePath(path: string): string {
  // Every request of the host passes through `owns`: skip the regex unless there is a slash to strip.
  return path.length > 1 && path.charCodeAt(path.length - 1) === SLASH ? path.replace(/\/+$/, '') || '/' : path;
}

/**
 * The one route table of the platform: exact paths, looked up in a Map so a request that is not
 * the platform's costs one prefix scan before it falls through to the host.
 */
export class Router {
  private readonly routes = new Map<string, Map<string, Route>>();
  private readonly namespaces: (Namespace & { under: string })[] = [];

  addNamespace(namespace: Namespace): void {
    this.namespaces.push({ ...namespace, under: `${namespace.prefix}/` });
  }

  add(route: Route): void {
    const byMethod = this.routes.get(route.path) ?? new Map<string, Route>();
    if (byMethod.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    byMethod.set(route.method, route);
    this.routes.set(route.path, byMethod);
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
    const byMethod = this.routes.get(path);
    if (byMethod) {
      const route = byMethod.get(method) ?? (method === 'HEAD' ? byMethod.get('GET') : undefined);
      if (route) return { kind: 'route', route };
      const any = byMethod.values().next().value as Route;
      return { kind: 'error', formatError: any.formatError, error: new MethodNotAllowedError([...byMethod.keys()]) };
    }
    const namespace = this.namespaces.find((ns) => path.startsWith(ns.under) || path === ns.prefix);
    if (!namespace) return { kind: 'none' };
    return { kind: 'error', formatError: namespace.formatError, error: new NotFoundError(`No such endpoint: ${path}`) };
  }
}
