import Joi from 'joi';
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

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const isLeapYear = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;

/** A time after the date with no `Z` or `±hh:mm` after it (joi's ISO shapes: `T` or a space, then digits). */
const TIME_WITHOUT_OFFSET = /[T\s]\d[^Z+-]*$/;

/**
 * `Joi.date().iso()` that also holds the day to the calendar: joi reads
 * 2026-02-30 as 2 March (Date's rollover), so a mistyped window or expiry
 * would be taken silently as another day. Refused with joi's own
 * `date.format` message instead. A date-time without an offset is read as
 * UTC, as a date alone is: joi's `new Date(string)` reads it in the host's
 * time zone, so the same request named another instant on a host with TZ set.
 */
export function isoCalendarDate(): Joi.DateSchema {
  return Joi.date().iso().custom((value: Date, helpers) => {
    const original = typeof helpers.original === 'string' ? helpers.original : null;
    const day = original === null ? null : /^([+-]?\d{4,6})-(\d{2})-(\d{2})/.exec(original);
    if (day) {
      const [year, month, date] = [Number(day[1]), Number(day[2]), Number(day[3])];
      const last = month === 2 && isLeapYear(year) ? 29 : DAYS_IN_MONTH[month - 1];
      if (last === undefined || date < 1 || date > last) return helpers.error('date.format', { format: 'iso' });
    }
    if (original !== null && TIME_WITHOUT_OFFSET.test(original)) {
      const utc = Date.parse(original + 'Z');
      return Number.isNaN(utc) ? helpers.error('date.format', { format: 'iso' }) : new Date(utc);
    }
    return value;
  });
}
