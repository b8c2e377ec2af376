/** `GET {admin}/metrics`: the Prometheus text exposition of the platform's registry. */
import type { Registry } from 'prom-client';
import type { AdminAccessCheck } from './access.js';
import { adminRoute } from './route.js';

export function metricsRoutes(basePath: string, access: AdminAccessCheck, registry: Registry) {
  return [
    adminRoute(basePath, access, {
      method: 'GET',
      path: '/metrics',
      doc: {
        operationId: 'admin_metrics',
        summary: 'Metrics in the Prometheus text format',
        responses: { 200: { description: 'The Prometheus text exposition', contentType: registry.contentType } },
      },
      async handle() {
        return { status: 200, headers: { 'content-type': registry.contentType }, body: await registry.metrics() };
      },
    }),
  ];
}
