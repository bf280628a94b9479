import type Joi from 'joi';
import { ApiError } from '../errors.ts';

/**
 * Joi at the edge: returns the typed, defaulted value or throws a 400 whose
 * message is an array with one entry per rejected field.
 */
export function validate<T>(schema: Joi.Schema<T>, input: unknown, options?: Joi.ValidationOptions): T {
  // joi merges preferences into its defaults on every call that passes any; valid input (nearly all of it) is
  // checked without them, which gives the same value, and only a refusal is checked again for every field's message.
  if (options === undefined) {
    const first = schema.validate(input ?? {});
    if (!first.error) return first.value as T;
  }
  const { value, error } = schema.validate(input ?? {}, { abortEarly: false, stripUnknown: false, errors: { wrap: { label: '' } }, ...options });
  if (error) {
    const byField = new Map<string, string>();
    for (const d of error.details) {
      const field = d.path.join('.') || 'body';
      if (!byField.has(field)) byField.set(field, d.message);
    }
    const first = error.details[0]?.path.join('.') || null;
    throw new ApiError(400, [...byField.values()], { param: first, code: 'VALIDATION_FAILED' });
  }
  return value as T;
}
