/**
 * A header from what a host hands its callbacks (`admin.authorize`, `oauth.authenticate`):
 * Express, Connect and Fastify their request and Koa `ctx` (plain `headers`), fetch its `Request`
 * (`Headers`), Hono its context (`c.req.header()`).
 */
export function rawHeader(raw: unknown, name: string): string | undefined {
  if (raw instanceof Request) return raw.headers.get(name) ?? undefined;
  const host = raw as { req?: { header(name: string): string | undefined }; headers?: Record<string, string | undefined> };
  return host.headers ? host.headers[name] : host.req?.header(name);
}
