/**
 * How the courier schema tests read a refusal (issuesOf, rulesOf), and the valid bodies they vary.
 */
import { z } from 'zod';
import { ValidationError, type FieldIssue } from '../../src/core/errors.js';
import { parseWith } from '../../src/core/validation.js';
import { orderBody } from '../support/courier.js';

/** The issues a body produces; fails the test if the body unexpectedly parses. */
export function issuesOf(schema: z.ZodType, input: unknown): readonly FieldIssue[] {
  try {
    parseWith(schema, input);
  } catch (error) {
    if (error instanceof ValidationError) return error.issues;
    throw error;
  }
  throw new Error('expected a ValidationError, but the input parsed');
}

/** Field and rule only, for comparing the whole list without repeating every message. */
export function rulesOf(schema: z.ZodType, input: unknown): { field: string; rule: string }[] {
  return issuesOf(schema, input).map(({ field, rule }) => ({ field, rule }));
}

// Balance payment (12), the normal-order value the agent-order tests set against.
export const order = orderBody(undefined, { paymentId: 12 });

export const estimate = {
  orderTypeId: 1,
  sendTypeId: 22,
  fetchTypeId: 13,
  paymentId: 1,
  expressTypeId: 3,
  customerMansionId: 10,
  customerFloorId: 101,
  myMansionId: 20,
  myFloorId: 201,
  goodsWeight: 0.2,
};

export const preOrder = {
  orderTypeId: 1,
  expressTypeId: 3,
  customerContacts: 'Ana Silva',
  customerMobileNumber: '66123456',
  customerAddress: 'Rua do Campo 12, 3rd floor',
  myContacts: 'Bo Chen',
  myMobileNumber: '28880000',
  myAddress: 'Avenida Central 5',
  goodsWeight: 2,
};
