/** The route table: exact paths first, then `:name` segments under a namespace, decoded. */
import { describe, expect, it } from 'vitest';
import { errorEnvelope } from '../../src/core/envelope.js';
import { jsonResponse } from '../../src/core/http.js';
import { Router, type Route } from '../../src/core/router.js';

const route = (method: string, path: string): Route => ({
  method,
  path,
  formatError: errorEnvelope,
  handler: async (_request, params) => jsonResponse(200, { path, params }),
  doc: { operationId: `${method} ${path}`, summary: 'a route', tag: 'test', responses: { 200: { description: 'ok' } } },
});

function table(): Router {
  const router = new Router();
  router.addNamespace({ prefix: '/admin', formatError: errorEnvelope });
  router.add(route('GET', '/admin/clients'));
  router.add(route('GET', '/admin/clients/:id'));
  router.add(route('PATCH', '/admin/clients/:id'));
  router.add(route('POST', '/admin/clients/:id/secret'));
  return router;
}

describe('Router', () => {
  it('matches `:name` segments and decodes them', () => {
    const match = table().match('GET', '/admin/clients/enc%3Aodd%2Fclient');
    expect(match.kind === 'route' && match.params).toEqual({ id: 'enc:odd/client' });
    const secret = table().match('POST', '/admin/clients/abc/secret/');
    expect(secret.kind === 'route' && [secret.route.path, secret.params]).toEqual(['/admin/clients/:id/secret', { id: 'abc' }]);
  });

  it('prefers the exact path, answers 405 with Allow for another method, 404 for an empty or malformed segment', () => {
    const router = table();
    const exact = router.match('GET', '/admin/clients');
    expect(exact.kind === 'route' && exact.route.path).toBe('/admin/clients');
    const wrongMethod = router.match('DELETE', '/admin/clients/abc');
    expect(wrongMethod.kind === 'error' && [wrongMethod.error.status, wrongMethod.error.headers]).toEqual([405, { allow: 'GET, PATCH' }]);
    for (const path of ['/admin/clients//secret', '/admin/clients/%E0%A4%A/secret', '/admin/clients/a/b']) {
      const missing = router.match('POST', path);
      expect(missing.kind === 'error' && missing.error.status, path).toBe(404);
    }
  });

  it('refuses a route added twice, naming its method and path', () => {
    const router = table();
    expect(() => router.add(route('PATCH', '/admin/clients/:id'))).toThrow(
      expect.objectContaining({ name: 'ConfigurationError', code: 'invalid_argument', field: 'route', message: expect.stringContaining('PATCH /admin/clients/:id is added twice') }),
    );
    expect(() => router.add(route('GET', '/admin/clients'))).toThrow(expect.objectContaining({ code: 'invalid_argument', message: expect.stringContaining('GET /admin/clients is added twice') }));
  });

  it('refuses a parameterised route outside every namespace, and lists every route', () => {
    const router = table();
    expect(() => router.add(route('GET', '/elsewhere/:id'))).toThrow(expect.objectContaining({ code: 'invalid_argument', field: 'route', message: expect.stringMatching(/namespace/) }));
    expect(router.list().map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /admin/clients',
      'GET /admin/clients/:id',
      'PATCH /admin/clients/:id',
      'POST /admin/clients/:id/secret',
    ]);
  });
});
