import { z } from 'zod';

export type JsonSchema = Record<string, unknown>;

/**
 * A zod schema as the JSON Schema of OpenAPI 3.1 (draft 2020-12). The input side: what a caller
 * sends, and for a response what a caller reads, so preprocessing steps show the value they take.
 * Refinements JSON Schema cannot say (a real calendar date, cross-field rules) are left to the
 * platform's own answer, a 400 naming the rule.
 */
export function jsonSchemaOf(schema: z.ZodType): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'any' }) as JsonSchema;
  return rest;
}
