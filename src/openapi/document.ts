/**
 * The OpenAPI 3.1 document of the platform, built from the route table: each route's `doc`
 * (route-doc.ts) becomes an operation, its zod schemas JSON Schema. Nothing here is written per
 * endpoint, so the document lists exactly the routes the platform answers.
 */
import type { ResponseHeaderName, RouteDoc, RouteResponseDoc, SecuritySchemeName } from '../core/route-doc.js';
import type { Route } from '../core/router.js';
import { jsonSchemaOf, type JsonSchema } from './json-schema.js';
import { securitySchemes } from './security.js';

export type PathItem = Record<string, unknown>;

/** `fromRoot`: a host route, whose path counts from the server's root, not from where the platform is mounted. */
export type DocumentedRoute = Pick<Route, 'method' | 'path' | 'doc'> & { fromRoot?: true };

export interface ApiDocumentInfo {
  title: string;
  version: string;
  description?: string;
}

export interface ApiDocumentContext {
  info: ApiDocumentInfo;
  /** Where the paths are relative to: the public URL of the mount point. */
  serverUrl: string;
  /** The server's root, where the host's own routes count from (the mount point's origin). */
  rootUrl: string;
  /** Where the OAuth endpoints answer, while the OAuth server is on. */
  oauthIssuer?: string;
  /** The host's own path items, added beside the platform's. */
  extraPaths?: Readonly<Record<string, PathItem>>;
}

const HEADERS: Record<ResponseHeaderName, { description: string; schema: JsonSchema }> = {
  Location: { description: 'Where the browser goes next', schema: { type: 'string', format: 'uri-reference' } },
  'Retry-After': { description: 'Seconds to wait before trying again', schema: { type: 'integer', minimum: 0 } },
  'WWW-Authenticate': { description: 'The authentication scheme the route expects (RFC 9110 11.6.1)', schema: { type: 'string' } },
  'RateLimit-Policy': {
    description: 'The quota, one item per limited period: `"minute";q=60;w=60, "day";q=1000;w=86400` (IETF ratelimit-headers draft)',
    schema: { type: 'string' },
  },
  RateLimit: { description: 'What is left, one item per limited period: `"minute";r=57;t=23` (units remaining, seconds to the reset)', schema: { type: 'string' } },
  'Cache-Control': { description: 'How long the answer may be cached', schema: { type: 'string' } },
  ETag: { description: 'The entity tag of the answer: send it back as If-None-Match, and an unchanged answer is a 304 without a body', schema: { type: 'string' } },
};

const TAGS = [
  { name: 'courier', description: 'The courier proxy: the caller sends the business fields, the platform signs and forwards them' },
  { name: 'quota', description: 'Quotas of the OpenAPI routes, and this document' },
  { name: 'oauth', description: 'The OAuth 2.0 / OpenID Connect authorization server' },
  { name: 'admin', description: 'The operator API' },
  { name: 'openapi', description: "The host's own routes, behind the quota guard" },
];

/** `/admin/clients/:id` is `/admin/clients/{id}`, with `id` a path parameter. */
function openApiPath(path: string): { path: string; params: string[] } {
  const params: string[] = [];
  const converted = path.replace(/:([^/]+)/g, (_match, name: string) => {
    params.push(name);
    return `{${name}}`;
  });
  return { path: converted, params };
}

function queryParameters(doc: RouteDoc): Record<string, unknown>[] {
  if (!doc.query) return [];
  const schema = jsonSchemaOf(doc.query);
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, { description, ...property }]) => ({
    name,
    in: 'query',
    required: required.has(name),
    ...(description === undefined ? {} : { description }),
    schema: property,
  }));
}

function response(doc: RouteResponseDoc): Record<string, unknown> {
  const out: Record<string, unknown> = { description: doc.description };
  if (doc.headers?.length) out.headers = Object.fromEntries(doc.headers.map((name) => [name, HEADERS[name]]));
  if (doc.schema || doc.contentType) {
    out.content = { [doc.contentType ?? 'application/json']: { schema: doc.schema ? jsonSchemaOf(doc.schema) : { type: 'string' } } };
  }
  return out;
}

function security(doc: RouteDoc): Record<string, string[]>[] | undefined {
  if (!doc.security?.length) return undefined;
  return [...doc.security.map((name) => ({ [name]: [] })), ...(doc.credentialsOptional ? [{}] : [])];
}

function operation(doc: RouteDoc, pathParams: readonly string[]): Record<string, unknown> {
  const parameters = [...pathParams.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } })), ...queryParameters(doc)];
  const op: Record<string, unknown> = { operationId: doc.operationId, summary: doc.summary, tags: [doc.tag] };
  if (doc.description) op.description = doc.description;
  const requirements = security(doc);
  if (requirements) op.security = requirements;
  if (parameters.length) op.parameters = parameters;
  if (doc.body) {
    const media: Record<string, unknown> = { schema: jsonSchemaOf(doc.body.schema) };
    if (doc.body.example !== undefined) media.example = doc.body.example;
    op.requestBody = { required: true, content: { [doc.body.contentType]: media } };
  }
  op.responses = Object.fromEntries(Object.entries(doc.responses).map(([status, r]) => [status, response(r)]));
  return op;
}

export interface DocumentedPaths {
  paths: Record<string, PathItem>;
  /** The paths of the host's routes, which count from the server's root. */
  fromRoot: string[];
  schemes: SecuritySchemeName[];
  tags: string[];
}

/** The part of the document that depends on the routes only, so it is built once. */
export function documentPaths(routes: readonly DocumentedRoute[]): DocumentedPaths {
  const paths: Record<string, PathItem> = {};
  const fromRoot: string[] = [];
  const schemes: SecuritySchemeName[] = [];
  const tags = new Set<string>();
  for (const route of routes) {
    const { path, params } = openApiPath(route.path);
    if (route.fromRoot) fromRoot.push(path);
    const item = (paths[path] ??= {});
    item[route.method.toLowerCase()] = operation(route.doc, params);
    schemes.push(...(route.doc.security ?? []));
    tags.add(route.doc.tag);
  }
  return { paths, fromRoot, schemes, tags: [...tags] };
}

/** With the platform mounted under a prefix, the host's routes name their own server: the root (OpenAPI 3.1 4.8.9). */
function rootServers(documented: DocumentedPaths, context: ApiDocumentContext): Record<string, PathItem> {
  if (context.rootUrl === context.serverUrl) return documented.paths;
  const paths = { ...documented.paths };
  for (const path of documented.fromRoot) paths[path] = { ...paths[path], servers: [{ url: context.rootUrl }] };
  return paths;
}

export function apiDocument(documented: DocumentedPaths, context: ApiDocumentContext): Record<string, unknown> {
  return {
    openapi: '3.1.1',
    info: context.info,
    servers: [{ url: context.serverUrl }],
    tags: documented.tags.map((name) => TAGS.find((tag) => tag.name === name) ?? { name }),
    paths: { ...context.extraPaths, ...rootServers(documented, context) },
    components: { securitySchemes: securitySchemes(documented.schemes, context.oauthIssuer) },
  };
}
