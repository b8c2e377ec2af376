/**
 * `{admin}/rules`: quota rules changed at run time, kept in the quota store every process shares
 * (docs/operator.md#quota-rules). The rules in force are the configured ones and the stored ones
 * behind them; configured rules are listed but read-only. Other processes read a change within
 * their rule cache's lifetime (`quota.ruleCache.ttlMs`, 5 s by default), this one at once.
 */
import { z } from 'zod';
import { ok } from '../core/envelope.js';
import { ConflictError, NotFoundError, ValidationError } from '../core/errors.js';
import { isPlainObject } from '../core/plain-object.js';
import type { Logger } from '../core/logger.js';
import type { StoreGuard } from '../core/store-guard.js';
import { readBody } from '../core/body.js';
import { parseWith } from '../core/validation.js';
import { checkFiledRule, quotaRuleSchema, refusalOf, resolveRule, unsatisfiable, type QuotaDefaults, type QuotaRule } from '../quota/rules.js';
import { ruleKey, type QuotaRuleKey, type QuotaRuleStore, type StoredRuleEntry } from '../quota/store/types.js';
import type { AdminAccessCheck } from './access.js';
import { adminRoute, parseQuery, queryId } from './route.js';

export interface RulesDeps {
  logger: Logger;
  bodyLimit: number;
  store: QuotaRuleStore;
  /** The configured list; undefined when the host gave a rule source, whose rules nobody can list. */
  configured: readonly QuotaRule[] | undefined;
  defaults: QuotaDefaults;
  /** The quota's store guard: a failure or a late answer is a 503 (docs/errors.md), counted in the metrics like the guard's own calls. */
  storeGuard: Pick<StoreGuard, 'run'>;
  /** This process reads the rules afresh. */
  changed(): void;
  /** Whether an application has this id; absent when the quota's callers are not this platform's clients (a host's `quota.verifyToken`). */
  clientExists?: (clientId: string) => Promise<boolean>;
}

/** The query's parameters by the rule's field names: a 400 names what the caller sent. */
const QUERY_NAMES: Readonly<Record<string, string>> = { clientId: 'client_id', apiPath: 'api_path' };

function inQueryTerms<T>(parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    if (!(error instanceof ValidationError)) throw error;
    const rename = (text: string) => text.replace(/\b(clientId|apiPath)\b/g, (name) => QUERY_NAMES[name]!);
    throw new ValidationError(error.issues.map((issue) => ({ ...issue, field: rename(issue.field), message: rename(issue.message) })));
  }
}

/**
 * Deletes the stored rules of an application (docs/operator.md#applications: they go with it);
 * answers how many. Configured rules stay: the options are where they change.
 */
export function clientRulesRemover(deps: Pick<RulesDeps, 'store' | 'storeGuard' | 'changed'>): (clientId: string) => Promise<number> {
  return async (clientId) => {
    const stored = <T>(work: () => Promise<T>) => deps.storeGuard.run(work);
    const rules = (await stored(() => deps.store.listRules())).filter(({ key }) => key.scope === 'client' && key.clientId === clientId);
    for (const { key } of rules) await stored(() => deps.store.deleteRule(key));
    if (rules.length > 0) deps.changed();
    return rules.length;
  };
}

const ruleKeyQuery = z.strictObject({
  scope: z.enum(['client', 'global']),
  api_path: z.string().min(1),
  client_id: queryId.optional(),
});

const ruleView = (rule: QuotaRule, source: 'options' | 'store') => ({ ...rule, source });

/**
 * A stored rule as listed, under the key it is filed under: with `invalid`, what is wrong with it,
 * when the rule check refuses it (written around this API, under another rule's key, or no rule
 * at all): such a rule is not applied (docs/operator.md#quota-rules).
 */
function storedView({ key, rule }: StoredRuleEntry) {
  const invalid = (why: string, fields = {}) => ({ ...fields, ...key, source: 'store' as const, invalid: why });
  if (!isPlainObject(rule)) return invalid('must be an object');
  try {
    return ruleView(checkFiledRule(rule, key, ''), 'store');
  } catch (error) {
    const { scope: _scope, clientId: _clientId, apiPath: _apiPath, ...limits } = rule;
    return invalid(refusalOf(error), limits);
  }
}

export function ruleRoutes(basePath: string, access: AdminAccessCheck, deps: RulesDeps) {
  const configuredKeys = new Set((deps.configured ?? []).map(ruleKey));
  const stored = <T>(work: () => Promise<T>) => deps.storeGuard.run(work);
  const writable = (key: QuotaRuleKey) => {
    if (configuredKeys.has(ruleKey(key))) throw new ConflictError('This rule comes from the options (quota.rules); change it there');
  };

  return [
    adminRoute(basePath, access, {
      method: 'GET',
      path: '/rules',
      doc: {
        operationId: 'admin_list_rules',
        summary: 'List the quota rules in force: configured ones, then stored ones',
        responses: { 200: { description: 'The rules, each with its source (options or store); a stored one the rule check refuses, and so not applied, with `invalid` saying why' } },
      },
      async handle() {
        const list = await stored(() => deps.store.listRules());
        const rules = [
          ...(deps.configured ?? []).map((rule) => ruleView(rule, 'options')),
          ...list.filter(({ key }) => !configuredKeys.has(ruleKey(key))).map(storedView),
        ];
        return ok(rules);
      },
    }),
    adminRoute(basePath, access, {
      method: 'PUT',
      path: '/rules',
      doc: {
        operationId: 'admin_put_rule',
        summary: 'Create or replace a stored quota rule',
        body: { contentType: 'application/json', schema: quotaRuleSchema, example: { scope: 'client', clientId: 'partner-app', apiPath: '/openapi/v1/orders', minute: 600, day: 50_000 } },
        responses: { 200: { description: 'The rule as stored' }, 400: { description: 'A field is wrong (named), or `clientId` names no application' }, 409: { description: 'A configured rule has this key' } },
      },
      async handle(request) {
        const rule = parseWith(quotaRuleSchema, await readBody(request, { accept: ['json'], limit: deps.bodyLimit })) as QuotaRule;
        const impossible = unsatisfiable(resolveRule({ global: rule }, rule.apiPath, deps.defaults));
        if (impossible) throw new ValidationError([{ field: 'cost', rule: 'satisfiable', message: `exceeds the ${impossible} limit, so no call could ever pass` }]);
        writable(rule);
        if (rule.scope === 'client' && deps.clientExists && !(await deps.clientExists(rule.clientId!))) {
          throw new ValidationError([{ field: 'clientId', rule: 'known_client', message: `names no application: register it first (GET ${basePath}/clients lists them)` }]);
        }
        await stored(() => deps.store.saveRule(rule));
        deps.changed();
        deps.logger.info({ rule }, 'admin: quota rule saved');
        return ok(ruleView(rule, 'store'));
      },
    }),
    adminRoute(basePath, access, {
      method: 'DELETE',
      path: '/rules',
      doc: {
        operationId: 'admin_delete_rule',
        summary: 'Delete a stored quota rule',
        query: ruleKeyQuery,
        responses: { 200: { description: 'Deleted' }, 404: { description: 'No stored rule has this key' }, 409: { description: 'A configured rule has this key' } },
      },
      async handle(request) {
        const query = parseQuery(request, ruleKeyQuery);
        const key = inQueryTerms(
          () =>
            parseWith(quotaRuleSchema, {
              scope: query.scope,
              apiPath: query.api_path,
              ...(query.client_id === undefined ? {} : { clientId: query.client_id }),
            }) as QuotaRule,
        );
        writable(key);
        if (!(await stored(() => deps.store.deleteRule(key)))) throw new NotFoundError('No stored rule has this scope, client and path');
        deps.changed();
        deps.logger.info({ rule: { scope: key.scope, clientId: key.clientId, apiPath: key.apiPath } }, 'admin: quota rule deleted');
        return ok({ ...key, deleted: true });
      },
    }),
  ];
}
