import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createPrometheusTelemetry } from '../../src/metrics/prometheus.js';

/** The guarded-call samples of the host's registry, as `client endpoint outcome` → value. */
async function guardedSamples(registry: Registry): Promise<Record<string, number>> {
  const metric = await registry.getSingleMetric('courier_platform_guarded_calls_total')!.get();
  return Object.fromEntries(metric.values.map(({ labels, value }) => [`${labels.client_id} ${labels.endpoint} ${labels.outcome}`, value]));
}

describe('guarded-call metrics (docs/operator.md#metrics)', () => {
  it('a host reading its own registry sees every guarded call, each counted once however often it reads', async () => {
    const registry = new Registry();
    const telemetry = createPrometheusTelemetry(registry);
    telemetry.guardedCall('app-a', '/openapi/v1/orders', 'admitted', true);
    telemetry.guardedCall('app-a', '/openapi/v1/orders', 'admitted', true);
    telemetry.guardedCall('app-a', '/openapi/v1/orders', 'rejected', true);
    telemetry.guardedCall('app-b', '/openapi/v1/ping', 'store_error', false);
    expect(await guardedSamples(registry)).toEqual({
      'app-a /openapi/v1/orders admitted': 2,
      'app-a /openapi/v1/orders rejected': 1,
      'app-b /openapi/v1/ping store_error': 1,
    });
    expect(await guardedSamples(registry)).toEqual({
      'app-a /openapi/v1/orders admitted': 2,
      'app-a /openapi/v1/orders rejected': 1,
      'app-b /openapi/v1/ping store_error': 1,
    });
    telemetry.guardedCall('app-a', '/openapi/v1/orders', 'admitted', true);
    const text = await registry.metrics();
    expect(text).toContain('courier_platform_guarded_calls_total{client_id="app-a",endpoint="/openapi/v1/orders",outcome="admitted"} 3');
    expect(text).toContain('courier_platform_guarded_calls_total{client_id="app-b",endpoint="/openapi/v1/ping",outcome="store_error"} 1');
  });
});
