/**
 * The admin API's options (docs/operator.md): off unless given, and then it needs a way to tell an
 * operator, a static token, the host's own check, or both.
 */
import { z } from 'zod';
import type { Registry } from 'prom-client';
import { basePathOption, functionOption, httpUrlOption, objectWith } from '../core/option-schemas.js';
import { BEARER_TOKEN_SYNTAX } from '../core/bearer.js';

/** The host's answer on who is an operator: `true` yes, `false` signed in but not an operator (403), `null`/`undefined` nobody signed in (401). */
export type AdminDecision = boolean | null | undefined;

export interface AdminOptions<Req = unknown> {
  /** Where the admin API answers, relative to the mount point. Default `/admin`. */
  basePath?: string;
  /** A static Bearer token for machines, at least 32 characters; compared in constant time. */
  token?: string;
  /** The host's own check of an operator, given the framework's request (Express `req`, Koa `ctx`). */
  authorize?: (req: Req) => AdminDecision | Promise<AdminDecision>;
  /**
   * Origins of other sites whose pages may write through the admin API with the operator's
   * cookies, e.g. `['https://ops.example.com']`. Default none: writes from other sites' pages are
   * refused (docs/operator.md#cross-site-requests).
   */
  allowedOrigins?: string[];
  /** How long a rotated-out client secret keeps working, in seconds. Default 86400 (24 h). */
  secretOverlapSeconds?: number;
  /** Where the metrics go (a prom-client Registry, e.g. the one your own /metrics serves). Default: a registry of the platform's own. */
  registry?: Registry;
}

/** `https://ops.example.com`: scheme, host and port, as a browser sends it in `Origin`. */
const originOption = httpUrlOption.refine((value) => URL.canParse(value) && new URL(value).origin === value, 'must be an origin: scheme, host and port only, no path or trailing slash');

export const adminOptionsSchema = z
  .strictObject({
    basePath: basePathOption.default('/admin'),
    token: z
      .string()
      .min(32, 'must be at least 32 characters (e.g. `openssl rand -hex 32`)')
      .regex(BEARER_TOKEN_SYNTAX, 'must hold only letters, digits and - . _ ~ + / (a Bearer token, RFC 6750 2.1), e.g. `openssl rand -hex 32`')
      .optional(),
    authorize: functionOption<NonNullable<AdminOptions['authorize']>>().optional(),
    allowedOrigins: z.array(originOption).default([]),
    secretOverlapSeconds: z.number().int().min(0).default(86_400),
    registry: objectWith<Registry>(['metrics', 'registerMetric', 'getSingleMetric'], 'a prom-client Registry').optional(),
  })
  .superRefine((admin, context) => {
    if (admin.token !== undefined || admin.authorize !== undefined) return;
    // `token: process.env.ADMIN_TOKEN` with the variable unset is the usual way to get here.
    const message =
      'token' in admin
        ? 'is undefined (is the environment variable it reads set?): the admin API needs `token` or `authorize`, or nobody could call it'
        : 'needs `token` or `authorize`: without one nobody could call the admin API';
    context.addIssue({ code: 'custom', path: ['token'], message });
  });

export type ResolvedAdminOptions = z.output<typeof adminOptionsSchema>;
