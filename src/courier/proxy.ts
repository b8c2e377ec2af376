import { readBasicAuth } from '../core/basic-auth.js';
import { readBody } from '../core/body.js';
import { z } from 'zod';
import { envelopeError, errorEnvelope, failure, failureEnvelopeSchema, fieldErrorsSchema, ok, okEnvelopeSchema } from '../core/envelope.js';
import { BadRequestError, PlatformError, UnauthorizedError } from '../core/errors.js';
import type { PlatformRequest, PlatformResponse } from '../core/http.js';
import { isPlainObject } from '../core/plain-object.js';
import type { Telemetry } from '../core/telemetry.js';
import type { Logger } from '../core/logger.js';
import type { RouteDoc, RouteResponseDoc } from '../core/route-doc.js';
import type { Route } from '../core/router.js';
import { parseWith } from '../core/validation.js';
import type { CourierOperation } from './catalog.js';
import { echoRedactor } from './echo.js';
import { RESERVED_FIELDS } from './operations.js';
import type { Signer } from './signing.js';
import type { CourierTransport } from './transport.js';

export interface CourierCredentials {
  appId: string;
  appSecret: string;
}

export interface CourierProxyConfig {
  basePath: string;
  credentials: CourierCredentials | undefined;
  version: string;
  signer: Signer;
  transport: CourierTransport;
  bodyLimit: number;
  logger: Logger;
  telemetry: Telemetry;
}

const CHALLENGE = 'Basic realm="courier", charset="UTF-8"';

function credentialsFor(request: PlatformRequest, configured: CourierCredentials | undefined): CourierCredentials {
  const auth = readBasicAuth(request);
  if (auth.kind === 'basic') return { appId: auth.user, appSecret: auth.password };
  if (auth.kind === 'malformed') throw new UnauthorizedError(`${auth.reason} (user = upstream app id, password = app secret)`, CHALLENGE);
  if (configured) return configured;
  throw new UnauthorizedError(
    'No courier credentials: send Basic Auth (user = upstream app id, password = app secret) or configure courier.credentials',
    CHALLENGE,
  );
}

async function businessInput(request: PlatformRequest, operation: CourierOperation, bodyLimit: number): Promise<Record<string, unknown>> {
  if (operation.method === 'GET') return Object.fromEntries(request.query);
  const body = await readBody(request, { limit: bodyLimit, accept: ['json'] });
  if (body === undefined) return {};
  if (!isPlainObject(body)) throw new BadRequestError('Request body must be a JSON object');
  return body;
}

function rejectReservedFields(input: Record<string, unknown>): void {
  const sent = RESERVED_FIELDS.filter((field) => Object.hasOwn(input, field));
  if (sent.length > 0) {
    throw new PlatformError('forbidden_field', `Do not send ${sent.join(', ')}: the platform adds api, appId, version and sign itself`, {
      data: { errors: sent.map((field) => ({ field, rule: 'forbidden_field', message: 'is added by the platform' })) },
    });
  }
}

function operationHandler(operation: CourierOperation, config: CourierProxyConfig) {
  return async (request: PlatformRequest): Promise<PlatformResponse> => {
    const credentials = credentialsFor(request, config.credentials);
    const input = await businessInput(request, operation, config.bodyLimit);
    rejectReservedFields(input);
    const params = parseWith(operation.schema, input);

    const fields = { ...params, api: operation.name, appId: credentials.appId, version: config.version };
    const body = { ...fields, sign: config.signer(fields, credentials.appSecret) };
    const started = performance.now();
    try {
      const reply = await config.transport({ api: operation.name, body, idempotent: operation.idempotent });
      config.telemetry.courierCall(operation.name, reply.code === 0 ? 'ok' : 'refused', (performance.now() - started) / 1000);
      const redacted = echoRedactor(credentials.appSecret, body.sign);
      if (reply.code === 0) return ok(redacted(reply.data));
      return failure(200, redacted(reply.message) || `The courier platform refused the call (code ${reply.code})`, { upstreamCode: reply.code });
    } catch (error) {
      config.telemetry.courierCall(operation.name, 'error', (performance.now() - started) / 1000);
      config.logger.warn({ api: operation.name, err: error, ms: performance.now() - started }, 'courier call failed');
      throw error;
    }
  };
}

const formatError = (error: PlatformError) => errorEnvelope(error);

/** An upstream business error keeps HTTP 200 (docs/courier.md): the exchange worked, the courier said no. */
const refusal = failureEnvelopeSchema(z.object({ upstreamCode: z.number() }));

/** The errors every operation can answer; body errors only where there is a body. */
function errorResponses(operation: CourierOperation): Record<number, RouteResponseDoc> {
  const body: Record<number, RouteResponseDoc> =
    operation.method === 'POST' ? { 413: envelopeError('The body is larger than `bodyLimit`'), 415: envelopeError('The body is not `application/json`') } : {};
  return {
    ...body,
    400: envelopeError('Validation failed (`data.errors` names every field and rule), a reserved field was sent, or the body is not a JSON object', undefined, fieldErrorsSchema),
    401: envelopeError('No usable courier credentials: Basic Auth half-filled or malformed, or none sent and none configured', ['WWW-Authenticate']),
    502: envelopeError('The courier platform could not be reached, failed, or answered something that is not its envelope'),
    504: envelopeError('The courier platform did not answer within `courier.timeoutMs`'),
  };
}

function operationDoc(operation: CourierOperation, credentialsConfigured: boolean): RouteDoc {
  const input = operation.method === 'GET' ? { query: operation.schema } : { body: { contentType: 'application/json' as const, schema: operation.schema, example: operation.doc.example } };
  return {
    operationId: operation.name,
    summary: operation.doc.summary,
    tag: 'courier',
    security: ['courierBasic'],
    credentialsOptional: credentialsConfigured,
    ...input,
    responses: {
      200: {
        description: 'The upstream answered: `code` 0 with its `data`, or `code` 1 with its message and `data.upstreamCode`',
        schema: z.union([okEnvelopeSchema(operation.doc.data), refusal]),
      },
      ...errorResponses(operation),
    },
  };
}

/** One route per catalog row; routing, validation, signing and forwarding are written once. */
export function courierRoutes(catalog: readonly CourierOperation[], config: CourierProxyConfig): Route[] {
  return catalog.map((operation) => ({
    method: operation.method,
    path: `${config.basePath}/${operation.name}`,
    handler: operationHandler(operation, config),
    formatError,
    doc: operationDoc(operation, config.credentials !== undefined),
  }));
}

export { formatError as courierErrorFormatter };
